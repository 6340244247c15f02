// The search's result as text and JSON (docs/search.md#command-line).
#include "cli/search_output.hpp"

#include <fmt/format.h>

#include <cmath>

#include "dvfslab/json_optional.hpp"

namespace dvfslab::cli {
namespace {

// The value of every knob the search controls; where the setting leaves a knob at
// the default, the value the GPU was found at (its lock, else its application clock;
// its power limit), which is what the default setting ran at; a GPU that reports no
// such control (a replayed table) runs at its default. Absent where the search does
// not control the knob.
struct Knobs {
  std::optional<int> sm_mhz, mem_mhz, power_limit_w;
};

// A clock as found: locked to one value, else the application clock, else (a GPU
// that reports neither) its default.
std::optional<int> found_clock(std::optional<int> locked_min, std::optional<int> locked_max,
                               std::optional<int> application, std::optional<int> gpu_default) {
  if (locked_min && locked_min == locked_max) return locked_min;
  return application ? application : gpu_default;
}

Knobs controlled_values(const SearchOutcome& outcome, const Setting& setting) {
  const ControlState& found = outcome.found;
  Knobs knobs;
  if (outcome.knobs.sm) {
    knobs.sm_mhz = setting.sm_mhz
                       ? setting.sm_mhz
                       : found_clock(found.locked_sm_min_mhz, found.locked_sm_max_mhz,
                                     found.application_graphics_mhz, outcome.clocks.default_graphics_mhz);
  }
  if (outcome.knobs.mem) {
    knobs.mem_mhz = setting.mem_mhz
                        ? setting.mem_mhz
                        : found_clock(found.locked_mem_min_mhz, found.locked_mem_max_mhz,
                                      found.application_memory_mhz, outcome.clocks.default_memory_mhz);
  }
  if (outcome.knobs.power) {
    knobs.power_limit_w = setting.power_limit_w;
    const std::optional<double> found_w =
        found.power_limit_w ? found.power_limit_w : outcome.limits.default_w;
    if (!knobs.power_limit_w && found_w) knobs.power_limit_w = static_cast<int>(std::lround(*found_w));
  }
  return knobs;
}

}  // namespace

nlohmann::json setting_json(const SearchOutcome& outcome, const Setting& setting) {
  const Knobs knobs = controlled_values(outcome, setting);
  return {{"sm_mhz", or_null(knobs.sm_mhz)},
          {"mem_mhz", or_null(knobs.mem_mhz)},
          {"power_limit_w", or_null(knobs.power_limit_w)},
          {"workload_profile", profile_or_null(setting.workload_profile)},
          {"is_default", setting.is_default()}};
}

std::string setting_text(const SearchOutcome& outcome, const Setting& setting) {
  const Knobs knobs = controlled_values(outcome, setting);
  std::string text;
  const auto add = [&](const char* name, const std::optional<int>& value, const char* unit) {
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", name,
                        value ? fmt::format("{} {}", *value, unit) : "?");
  };
  if (outcome.knobs.sm) add("sm", knobs.sm_mhz, "MHz");
  if (outcome.knobs.mem) add("mem", knobs.mem_mhz, "MHz");
  if (outcome.knobs.power) add("pl", knobs.power_limit_w, "W");
  if (outcome.knobs.profile) {
    text += fmt::format("{}profile {}", text.empty() ? "" : ", ",
                        setting.workload_profile ? workload_power_profile_name(*setting.workload_profile)
                                                 : std::string("as found"));
  }
  return setting.is_default() ? fmt::format("default as found ({})", text) : text;
}

namespace {

const PointSummary* optimum_point(const SearchOutcome& outcome) {
  if (!outcome.analysis || !outcome.analysis->optimum) return nullptr;
  return &outcome.analysis->points[*outcome.analysis->optimum];
}

// Each GPU of a job of several: its energy over the probes measured now.
nlohmann::json gpus_json(const std::vector<SweepGpuEnergy>& gpus) {
  nlohmann::json all = nlohmann::json::array();
  for (const SweepGpuEnergy& gpu : gpus) {
    all.push_back(
        {{"index", gpu.index}, {"uuid", gpu.uuid}, {"name", gpu.name}, {"energy_j", or_null(gpu.energy_j)}});
  }
  return all;
}

}  // namespace

nlohmann::json search_json(const SearchOutcome& outcome) {
  nlohmann::json probes = nlohmann::json::array();
  for (const Probe& probe : outcome.probes) {
    nlohmann::json entry = setting_json(outcome, probe.setting);
    entry["order"] = probe.order;
    entry["repetitions"] = probe.repetitions;
    entry["energy_per_item_j"] = probe.energy_per_item_j;
    entry["flags"] = probe.flags.names();
    entry["setting_not_applied"] = probe.flags.setting_not_applied();
    probes.push_back(std::move(entry));
  }
  nlohmann::json optimum = nullptr;
  if (const PointSummary* point = optimum_point(outcome)) {
    optimum = setting_json(outcome, point->setting);
    optimum["energy_per_item_j"] = point->energy_per_item_j.mean;
    optimum["time_per_iteration_s"] = point->time_per_iteration_s.mean;
    optimum["mean_power_w"] = point->mean_power_w.mean;
  }
  const auto& analysis = outcome.analysis;
  nlohmann::json json = {
      {"gpu", outcome.gpu.name},
      {"simulated", outcome.gpu.simulated},
      {"workload",
       analysis ? nlohmann::json(to_string(analysis->key.workload_case)) : nlohmann::json(nullptr)},
      {"strategy", outcome.strategy},
      {"objective", to_string(outcome.objective)},
      {"optimum", optimum},
      {"default_energy_per_item_j",
       analysis ? nlohmann::json(analysis->points[analysis->baseline].energy_per_item_j.mean) : nullptr},
      {"saving_pct", analysis ? or_null(analysis->energy_saving_pct) : nullptr},
      {"time_change_pct", analysis ? or_null(analysis->time_change_pct) : nullptr},
      {"confidence_within_1pct", or_null(outcome.confidence)},
      {"probes", probes},
      {"stopped_by_budget", outcome.stopped_by_budget},
      {"gpu_seconds", outcome.sweep.gpu_seconds},
      {"run_id", outcome.sweep.run_id},
      {"resumed", outcome.sweep.resumed},
      {"database", outcome.database},
  };
  if (!outcome.sweep.gpus.empty()) json["gpus"] = gpus_json(outcome.sweep.gpus);
  return json;
}

std::string search_text(const SearchOutcome& outcome) {
  const auto& analysis = outcome.analysis;
  std::string text = fmt::format("Search on {}{}{}: strategy {}, objective {}\n",
                                 outcome.job_label.empty() ? outcome.gpu.name : outcome.job_label,
                                 outcome.gpu.simulated ? " (SIMULATED)" : "",
                                 analysis ? " for " + to_string(analysis->key.workload_case) : std::string(),
                                 outcome.strategy, to_string(outcome.objective));
  text += "  probes, in measuring order:\n";
  for (const Probe& probe : outcome.probes) {
    text += fmt::format("  {:>4}  {:<36} {:>2} rep.  {:.6g} J/item{}\n", probe.order,
                        setting_text(outcome, probe.setting), probe.repetitions, probe.energy_per_item_j,
                        probe.flags.setting_not_applied() ? "  (setting not applied: not trusted)" : "");
  }
  if (const PointSummary* point = optimum_point(outcome)) {
    text +=
        fmt::format("  optimum: {}: {:.6g} J/item, {} against the default{}\n",
                    setting_text(outcome, point->setting), point->energy_per_item_j.mean,
                    analysis->energy_saving_pct ? fmt::format("saving {:.2f} %", *analysis->energy_saving_pct)
                                                : std::string("no saving known"),
                    analysis->time_change_pct ? fmt::format(" (time {:+.2f} %)", *analysis->time_change_pct)
                                              : std::string());
  } else {
    text += "  optimum: none (no probed setting meets the objective)\n";
  }
  text += outcome.confidence
              ? fmt::format("  confidence that the optimum is within 1 % of every probed setting: {:.1f} %\n",
                            100.0 * *outcome.confidence)
              : std::string("  confidence: unknown (no probe was measured twice)\n");
  text += fmt::format("  GPU time: {:.1f} s{}, {} probes{}; run {} in {}{}\n", outcome.sweep.gpu_seconds,
                      outcome.gpu.simulated ? " (simulated)" : "", outcome.probes.size(),
                      outcome.stopped_by_budget ? " (the budget stopped the search)" : "",
                      outcome.sweep.run_id, outcome.database,
                      outcome.sweep.points_skipped ? fmt::format(", {} already measured before the resume",
                                                                 outcome.sweep.points_skipped)
                                                   : "");
  for (const SweepGpuEnergy& gpu : outcome.sweep.gpus) {
    text +=
        fmt::format("  GPU {} ({}, {}): {} over the probes measured\n", gpu.index, gpu.name, gpu.uuid,
                    gpu.energy_j ? fmt::format("{:.1f} J", *gpu.energy_j) : std::string("energy unknown"));
  }
  return text;
}

}  // namespace dvfslab::cli
