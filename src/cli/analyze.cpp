// `dvfslab analyze`: the optimum and savings of every case, as tables or JSON.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/result_input.hpp"
#include "dvfslab/analysis.hpp"
#include "dvfslab/output_file.hpp"
#include "dvfslab/report.hpp"
#include "dvfslab/slurm.hpp"

namespace dvfslab::cli {
namespace {

struct AnalyzeOptions {
  std::string input;
  std::string objective = "energy";
  bool json = false;
  bool points = false;
  std::string emit;  // commands that apply the optima (src/slurm/optimum_commands.cpp)
};

void run_analyze(const AnalyzeOptions& options) {
  refuse_standard_output_over(input_files(options.input));
  const Objective objective = parse_objective(options.objective);
  const Analysis analysis = analyze(load_result_rows(options.input), objective);
  if (!options.emit.empty()) {
    fmt::print("{}", slurm::format_optimum_commands(analysis, slurm::parse_optimum_commands(options.emit)));
  } else if (options.json) {
    fmt::print(
        "{}\n",
        to_json(analysis, options.points).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    fmt::print("{}", format_analysis_tables(analysis));
  }
}

}  // namespace

void add_analyze_command(CLI::App& app) {
  auto options = std::make_shared<AnalyzeOptions>();
  CLI::App* command = app.add_subcommand(
      "analyze",
      "Find, for every case (GPU × workload × batch × mode × precision), the baseline setting, the "
      "optimal setting for an objective and the change in energy, time and power between them; "
      "then the geometric means across batch sizes and networks and the range of savings per GPU × mode.");
  command
      ->add_option("input", options->input,
                   "dvfslab database (SQLite) to analyze, or a sweep-table CSV file (read directly)")
      ->required();
  command->add_option("--objective", options->objective, objective_help())->capture_default_str();
  command->add_flag("--json", options->json,
                    "print the analysis as JSON on stdout instead of tables (contract in docs/analysis.md)");
  command->add_flag("--points", options->points,
                    "with --json: include every setting's metrics and 95 % confidence intervals");
  command
      ->add_option(
          "--emit", options->emit,
          "print, per GPU model × workload case, what applies the optimum: slurm (the --gpu-freq option "
          "of sbatch/srun) or nvidia-smi (an administrator's commands); docs/slurm.md")
      ->check(CLI::IsMember({"slurm", "nvidia-smi"}))
      ->excludes("--json");
  command->callback([options] { run_analyze(*options); });
}

}  // namespace dvfslab::cli
