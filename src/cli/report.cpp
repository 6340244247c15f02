// `dvfslab report`: the self-contained HTML report of a database, or the analysis in
// another of the formats of cli_analysis_writers(), written to a file.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/analysis_formats.hpp"
#include "cli/commands.hpp"
#include "cli/model_predictions.hpp"
#include "cli/number_checks.hpp"
#include "cli/result_input.hpp"
#include "dvfslab/analysis.hpp"
#include "dvfslab/output_file.hpp"
#include "dvfslab/report.hpp"
#include "dvfslab/search.hpp"
#include "dvfslab/store.hpp"

namespace dvfslab::cli {
namespace {

struct ReportOptions {
  std::string input;
  std::string output = "report.html";
  std::string format = "html";
  std::string objective = "energy";
  std::size_t raw_rows = 0;
  std::string model;  // a model.json whose predictions are drawn beside the measurements
  bool output_given = false;
  std::optional<std::string> figures;  // the folder of one SVG and one PDF per figure
  std::string style = "screen";
};

// The settings each search run of a database probed, numbered in the order it first
// measured them; none for a sweep table or plain sweeps.
std::map<std::pair<CaseKey, Setting>, int> search_probe_order(const std::filesystem::path& input) {
  std::map<std::pair<CaseKey, Setting>, int> order;
  if (input.extension() == ".csv") return order;
  Store store = Store::open_existing(input);
  std::map<std::int64_t, RunInfo> searches;
  for (RunInfo& run : store.runs()) {
    if (strategy_of_plan_text(run.plan_text)) searches.emplace(run.id, std::move(run));
  }
  if (searches.empty()) return order;
  std::map<std::pair<std::int64_t, Case>, int> probes_of_case;
  for (const StoredMeasurement& stored : store.measurements()) {
    const auto run = searches.find(stored.run_id);
    if (run == searches.end() || stored.point.role != RecordRole::grid) continue;
    const Case& workload_case = stored.point.point.workload_case;
    const CaseKey key{run->second.source, run->second.gpu.name, run->second.gpu.simulated, workload_case};
    if (order.count({key, stored.point.point.setting})) continue;
    order[{key, stored.point.point.setting}] = ++probes_of_case[{stored.run_id, workload_case}];
  }
  return order;
}

// The mean effective core clock of every setting that did not set the core clock.
std::map<std::pair<CaseKey, Setting>, double> measured_core_clocks(const std::vector<ResultRow>& rows) {
  std::map<std::pair<CaseKey, Setting>, std::pair<double, int>> sums;
  for (const ResultRow& row : rows) {
    if (row.setting.sm_mhz || !row.sm_mhz_mean) continue;
    auto& [sum, count] = sums[{CaseKey{row.source, row.gpu, row.simulated, row.workload_case}, row.setting}];
    sum += *row.sm_mhz_mean;
    ++count;
  }
  std::map<std::pair<CaseKey, Setting>, double> means;
  for (const auto& [key, sum_count] : sums) means[key] = sum_count.first / sum_count.second;
  return means;
}

// The mean memory clock measured at every setting that left the memory clock
// uncontrolled, read from the database (a sweep table records none). Read only where
// a case also set the memory clock: only there does a chart place such a setting on
// a memory-clock axis.
std::map<std::pair<CaseKey, Setting>, double> measured_memory_clocks(const std::filesystem::path& input,
                                                                     const Analysis& analysis) {
  std::map<std::pair<CaseKey, Setting>, double> means;
  const bool needed = std::any_of(analysis.cases.begin(), analysis.cases.end(), [](const CaseAnalysis& c) {
    const auto sets_memory = [](const PointSummary& p) { return p.setting.mem_mhz.has_value(); };
    return std::any_of(c.points.begin(), c.points.end(), sets_memory) &&
           !std::all_of(c.points.begin(), c.points.end(), sets_memory);
  });
  if (!needed || input.extension() == ".csv") return means;
  Store store = Store::open_existing(input);
  std::map<std::int64_t, RunInfo> runs;
  for (RunInfo& run : store.runs()) runs.emplace(run.id, std::move(run));
  std::map<std::pair<CaseKey, Setting>, std::pair<double, int>> sums;
  for (const StoredMeasurement& stored : store.measurements()) {
    const Point& point = stored.point.point;
    const auto run = runs.find(stored.run_id);
    if (point.setting.mem_mhz || !stored.measurement.mem_mhz_mean || run == runs.end()) continue;
    const CaseKey key{run->second.source, run->second.gpu.name, run->second.gpu.simulated,
                      point.workload_case};
    auto& [sum, count] = sums[{key, point.setting}];
    sum += *stored.measurement.mem_mhz_mean;
    ++count;
  }
  for (const auto& [key, sum_count] : sums) means[key] = sum_count.first / sum_count.second;
  return means;
}

void run_report(const ReportOptions& options) {
  // With --figures, the page is written only when -o asks for it too.
  const bool write_page = !options.figures || options.output_given;
  // Opened first, so that an output over the input is refused before any work.
  std::optional<OutputFile> output;
  if (write_page) output.emplace(options.output, input_files(options.input));
  const AnalysisWriter& writer = cli_analysis_writers().find(options.format);
  const auto models = options.model.empty() ? std::vector<model::Model>{} : model::read_models(options.model);
  std::vector<ResultRow> rows = load_result_rows(options.input);
  const Analysis analysis = analyze(rows, parse_objective(options.objective));
  for (const std::string& warning : pooling_warnings(analysis))
    fmt::print(stderr, "dvfslab: warning: {}\n", warning);
  for (const std::string& note : not_applied_notes(analysis)) fmt::print(stderr, "dvfslab: note: {}\n", note);
  const std::size_t measured_rows = rows.size();
  auto measured_sm_mhz = measured_core_clocks(rows);
  // Only the rows the page shows are kept while it is written.
  rows.resize(std::min(rows.size(), options.raw_rows));
  rows.shrink_to_fit();
  AnalysisOutput page(analysis);
  page.html = {.raw_rows = rows,
               .measured_rows = measured_rows,
               .probe_order = search_probe_order(options.input),
               .predicted_energy = predicted_energy(analysis, models),
               .prediction_label =
                   fmt::format("predicted ({})", std::filesystem::path(options.model).filename().string()),
               .measured_sm_mhz = std::move(measured_sm_mhz),
               .measured_mem_mhz = measured_memory_clocks(options.input, analysis),
               .style = options.style == "paper" ? FigureStyle::paper : FigureStyle::screen};
  if (options.figures) {
    const auto files = write_figure_files(analysis, *options.figures, page.html, [](const std::string& line) {
      fmt::print(stderr, "dvfslab: {}\n", line);
    });
    fmt::print(stderr, "dvfslab: wrote {} figures into {} (one .svg and one .pdf each)\n", files.size() / 2,
               *options.figures);
  }
  if (output) {
    writer.write(page, output->stream());
    output->commit();
    fmt::print(stderr, "dvfslab: wrote {} ({} cases)\n", options.output, analysis.cases.size());
  }
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* command = app.add_subcommand(
      "report",
      "Write one self-contained HTML file (works offline) with, per GPU × workload, power, throughput and "
      "energy per item against the varied clock or power limit, memory-clock figures and a core × memory "
      "heatmap when the memory clock varied, the Pareto plot, and the optimum/savings tables.");
  command
      ->add_option("input", options->input,
                   "dvfslab database (SQLite) to report on, or a sweep-table CSV file (read directly)")
      ->required();
  CLI::Option* output_option =
      command
          ->add_option(
              "-o,--output", options->output,
              "HTML file to write (replaced if it exists, atomically; never one of the inputs); with "
              "--figures, written only when given")
          ->capture_default_str();
  const auto& writers = cli_analysis_writers();
  command->add_option("--format", options->format, fmt::format("what to write: {}", writers.help()))
      ->check(CLI::IsMember(writers.names()))
      ->capture_default_str();
  command
      ->add_option("--objective", options->objective,
                   "objective for the optimum, as in `dvfslab analyze` (energy, edp, ed2p, "
                   "energy-within-slowdown:PCT%, time-within-power:WATTS W)")
      ->capture_default_str();
  command
      ->add_option(
          "--raw-rows", options->raw_rows,
          fmt::format("also show the first N measured rows as they are, in a table and in the page's "
                      "data (at most {}; `dvfslab export` writes them all)",
                      max_report_raw_rows))
      ->check(number_from(0, static_cast<double>(max_report_raw_rows)))
      ->capture_default_str();
  command->add_option(
      "--model", options->model,
      "a model.json (`dvfslab model fit -o`): draw its predicted energy, with a 95 % interval, "
      "beside the measured points of every case it has a model of; never in the tables or the optimum");
  command->add_option(
      "--figures", options->figures,
      "write every figure into this folder as NN-<title>.svg and NN-<title>.pdf (fonts embedded; the page "
      "then only with -o), "
      "drawn with node and converted by rsvg-convert (docs/report.md, \"Figures for a paper\")");
  command
      ->add_option("--style", options->style,
                   "screen or paper: figures sized for one column of a two-column paper (190 × 123 px "
                   "plots, 8-9 px DejaVu Sans, legends below), on the page and in --figures")
      ->check(CLI::IsMember({"screen", "paper"}))
      ->capture_default_str();
  command->callback([options, output_option] {
    options->output_given = output_option->count() > 0;
    run_report(*options);
  });
}

}  // namespace dvfslab::cli
