// The commands that apply an analysis' optima: Slurm's --gpu-freq for a job, or
// nvidia-smi for an administrator.
#include <fmt/format.h>

#include <ostream>

#include "dvfslab/control_characters.hpp"
#include "dvfslab/slurm.hpp"
#include "dvfslab/workload_profile_names.hpp"

namespace dvfslab::slurm {
namespace {

// The names come from tables and databases of others, and the text is meant to be
// run by root: a line break in a name must not end the comment.
std::string case_heading(const CaseAnalysis& analysis) {
  std::string heading = fmt::format("# {}{} · {}", escape_control_characters(analysis.key.gpu),
                                    analysis.key.simulated ? " (SIMULATED)" : "",
                                    escape_control_characters(to_string(analysis.key.workload_case)));
  if (!analysis.optimum) return heading + ": no measured setting satisfies the objective\n";
  if (analysis.energy_saving_pct && analysis.time_change_pct) {
    heading += fmt::format(": {:.1f} % less energy, time {:+.1f} %", *analysis.energy_saving_pct,
                           *analysis.time_change_pct);
  }
  return heading + "\n";
}

// A profile is no clock and no power limit: neither text below can set it.
std::string profile_note(const Setting& optimum) {
  if (!optimum.workload_profile) return {};
  return fmt::format(
      "# note: the optimum is the workload power profile {}, which these commands cannot request; the "
      "Slurm prolog applies it from the optimum table (analyze --emit optimum-table, docs/profiles.md)\n",
      workload_power_profile_name(*optimum.workload_profile));
}

std::string slurm_lines(const Setting& optimum) {
  if (optimum.is_default()) return "# the default setting is the optimum: no --gpu-freq needed\n";
  std::string lines = profile_note(optimum);
  if (optimum.sm_mhz || optimum.mem_mhz) {
    std::string value = optimum.sm_mhz ? std::to_string(*optimum.sm_mhz) : std::string();
    if (optimum.mem_mhz) value += fmt::format("{}memory={}", value.empty() ? "" : ",", *optimum.mem_mhz);
    lines += fmt::format("--gpu-freq={}\n", value);
  }
  if (optimum.power_limit_w) {
    lines += fmt::format(
        "# note: the optimum's power limit of {0} W is not a clock: --gpu-freq cannot set it; an "
        "administrator "
        "sets it on the node with: nvidia-smi -i \"$GPU\" -pl {0}\n",
        *optimum.power_limit_w);
  }
  return lines;
}

std::string nvidia_smi_lines(const Setting& optimum) {
  if (optimum.is_default()) return "# the default setting is the optimum: nothing to change\n";
  std::string lines = profile_note(optimum), undo;
  if (optimum.sm_mhz) {
    lines += fmt::format("nvidia-smi -i \"$GPU\" -lgc {0},{0}\n", *optimum.sm_mhz);
    undo += " -rgc";
  }
  if (optimum.mem_mhz) {
    lines += fmt::format("nvidia-smi -i \"$GPU\" -lmc {0},{0}\n", *optimum.mem_mhz);
    undo += " -rmc";
  }
  if (optimum.power_limit_w) lines += fmt::format("nvidia-smi -i \"$GPU\" -pl {}\n", *optimum.power_limit_w);
  if (!undo.empty()) lines += fmt::format("# undo the clocks: nvidia-smi -i \"$GPU\"{}\n", undo);
  if (optimum.power_limit_w)
    lines +=
        "# undo the power limit: nvidia-smi -i \"$GPU\" -pl <its default, from nvidia-smi -q -d POWER>\n";
  return lines;
}

}  // namespace

OptimumCommands parse_optimum_commands(std::string_view text) {
  if (text == "slurm") return OptimumCommands::slurm;
  if (text == "nvidia-smi") return OptimumCommands::nvidia_smi;
  throw UsageError(fmt::format("--emit {}: choose slurm or nvidia-smi", text));
}

std::string format_optimum_commands(const Analysis& analysis, OptimumCommands kind) {
  std::string text;
  if (kind == OptimumCommands::slurm) {
    text = fmt::format(
        "# Slurm's --gpu-freq for the {} optimum of each GPU model × workload case (sbatch/srun option).\n"
        "# Deprecated: Slurm applies --gpu-freq as application clocks, which NVML deprecates, and it cannot "
        "set a power\n# limit. Recommended: `dvfslab analyze DB --emit optimum-table` for the dvfslab Slurm "
        "prolog (docs/slurm.md).\n"
        "# The values are measured settings, so clocks the GPU model supports; Slurm rounds any other value "
        "to "
        "the nearest supported clock.\n",
        to_string(analysis.objective));
  } else {
    text = fmt::format(
        "# nvidia-smi commands (root) that apply the {} optimum of each GPU model × workload case;\n"
        "# set GPU to the GPU's index or UUID first. Locked clocks hold until reset or reboot.\n",
        to_string(analysis.objective));
  }
  for (const CaseAnalysis& entry : analysis.cases) {
    text += case_heading(entry);
    if (!entry.optimum) continue;
    const Setting& optimum = entry.points.at(*entry.optimum).setting;
    text += kind == OptimumCommands::slurm ? slurm_lines(optimum) : nvidia_smi_lines(optimum);
  }
  return text;
}

std::vector<AnalysisWriter> optimum_command_writers() {
  const auto writer_of = [](OptimumCommands kind) {
    return [kind](const AnalysisOutput& output, std::ostream& out) {
      out << format_optimum_commands(output.analysis, kind);
    };
  };
  return {{"slurm", "the --gpu-freq option of sbatch/srun that applies each optimum, docs/slurm.md",
           writer_of(OptimumCommands::slurm)},
          {"nvidia-smi", "an administrator's commands that apply each optimum",
           writer_of(OptimumCommands::nvidia_smi)}};
}

}  // namespace dvfslab::slurm
