// `dvfslab analyze`: the optimum and savings of every case, as tables or JSON.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/analysis_formats.hpp"
#include "cli/commands.hpp"
#include "cli/model_predictions.hpp"
#include "cli/result_input.hpp"
#include "dvfslab/analysis.hpp"
#include "dvfslab/output_file.hpp"
#include "dvfslab/report.hpp"

namespace dvfslab::cli {
namespace {

struct AnalyzeOptions {
  std::string input;
  std::string objective = "energy";
  std::string format = "tables";
  bool json = false;  // the same as --format json
  bool points = false;
  std::string emit;   // the same as --format slurm, nvidia-smi or optimum-table (src/slurm/)
  std::string model;  // a model.json whose predictions are shown beside the measurements

  std::string chosen_format() const {
    if (!emit.empty()) return emit;
    return json ? "json" : format;
  }
};

void run_analyze(const AnalyzeOptions& options) {
  refuse_standard_output_over(input_files(options.input));
  const AnalysisWriter& writer = cli_analysis_writers().find(options.chosen_format());
  const Objective objective = parse_objective(options.objective);
  const auto rows = load_result_rows(options.input);
  const auto models = options.model.empty() ? std::vector<model::Model>{} : model::read_models(options.model);
  const Analysis analysis = analyze(rows, objective);
  for (const std::string& warning : pooling_warnings(analysis))
    fmt::print(stderr, "dvfslab: warning: {}\n", warning);
  for (const std::string& note : not_applied_notes(analysis)) fmt::print(stderr, "dvfslab: note: {}\n", note);
  const auto warning = searched_objective_warning(options.input, objective);
  if (warning) fmt::print(stderr, "dvfslab: warning: {}\n", *warning);
  AnalysisOutput output(analysis);
  output.points = options.points;
  if (!options.model.empty()) {
    output.json_members["predicted"] = prediction_json(rows, models);
    output.text_after_tables = format_predictions(rows, models, options.model);
  }
  if (warning) output.json_members["warnings"] = nlohmann::json::array({*warning});
  writer.write(output, std::cout);
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
  const auto& writers = cli_analysis_writers();
  auto* format =
      command->add_option("--format", options->format, fmt::format("output format: {}", writers.help()))
          ->check(CLI::IsMember(writers.names()))
          ->capture_default_str();
  command
      ->add_flag("--json", options->json,
                 "the same as --format json: the analysis as JSON on stdout (contract in docs/analysis.md)")
      ->excludes(format);
  command->add_flag(
      "--points", options->points,
      "with --json or --format json: include every setting's metrics and 95 % confidence intervals");
  command
      ->add_option(
          "--emit", options->emit,
          "print, per GPU model × workload case, what applies the optimum: optimum-table (JSON for "
          "`dvfslab slurm prolog`, the recommended path), slurm (the --gpu-freq option of sbatch/srun; "
          "deprecated: Slurm applies it as application clocks, which NVML deprecates) or nvidia-smi (an "
          "administrator's commands); docs/slurm.md")
      ->check(CLI::IsMember({"optimum-table", "slurm", "nvidia-smi"}))
      ->excludes("--json")
      ->excludes(format);
  command
      ->add_option(
          "--model", options->model,
          "a model.json (`dvfslab model fit -o`): show its prediction, with a 95 % interval, beside every "
          "measured setting of the cases it has a model for; apart from the analysis (JSON: \"predicted\")")
      ->excludes("--emit");
  command->callback([options] { run_analyze(*options); });
}

}  // namespace dvfslab::cli
