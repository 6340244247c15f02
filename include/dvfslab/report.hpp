#pragma once
// Presenting an analysis: aligned terminal tables, the self-contained HTML report,
// and the registry of analysis writers that `analyze` and `report` pick by name.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/results.hpp"
#include "dvfslab/writer_registry.hpp"

namespace dvfslab {

// The per-case table (baseline, optimum, changes), the per-network geometric means
// and the per-GPU × mode summary, as aligned plain text. Simulated data is marked.
std::string format_analysis_tables(const Analysis& analysis);

// A model's energy per item at one measured setting, with its ~95 % interval: drawn
// beside the measured points, never in the tables nor in the optimum.
struct PredictedEnergy {
  double value = 0;
  double low = 0;
  double high = 0;
};

// How the figures are sized and set: as on screen, or for a two-column paper
// (`report --style paper`; docs/report.md, "Figures for a paper").
enum class FigureStyle { screen, paper };

// What the page holds besides the analysis. Its size follows the number of
// settings and cases, not of measured rows: the charts plot each setting's mean.
struct HtmlReportOptions {
  // Measured rows shown as they are, in a table and in the page's data (a caller
  // passes at most max_report_raw_rows of them); none by default.
  std::span<const ResultRow> raw_rows;
  // How many rows the analysis read, to say "N of M" over the raw rows.
  std::size_t measured_rows = 0;
  // The settings a search probed, per case, with the order it first measured them
  // (1 = first): numbered on the charts' points and listed under the case table.
  std::map<std::pair<CaseKey, Setting>, int> probe_order;
  // A model's predictions (`dvfslab report --model`), drawn as a dashed line and a
  // band in the energy figure and named there by `prediction_label`.
  std::map<std::pair<CaseKey, Setting>, PredictedEnergy> predicted_energy;
  std::string prediction_label;  // "predicted (model.json)"
  // The mean core clock measured at each setting that left the core clock
  // uncontrolled (a search's "default as found"), where the rows recorded it: where
  // the charts against the core clock draw that setting's default or optimum marker.
  std::map<std::pair<CaseKey, Setting>, double> measured_sm_mhz = {};
  // Likewise the mean memory clock measured at each setting that left the memory
  // clock uncontrolled: where the charts against the memory clock draw its markers.
  std::map<std::pair<CaseKey, Setting>, double> measured_mem_mhz = {};
  FigureStyle style = FigureStyle::screen;
};
inline constexpr std::size_t max_report_raw_rows = 10'000;
// Above this many settings in all, the page's analysis data leaves out the
// per-setting list (`dvfslab analyze --json --points` has it); the charts still
// plot every setting.
inline constexpr std::size_t max_report_detailed_points = 10'000;

// The HTML report as one self-contained page: per GPU × workload the study's
// figures, the Pareto plot and the optimum/savings table, with the data as JSON and
// the Vega, Vega-Lite and vega-embed runtimes embedded, so it works offline (see
// docs/report.md). Throws NotSupportedError when the build had no runtimes.
std::string render_html_report(const Analysis& analysis, const HtmlReportOptions& options = {});
// Writes render_html_report() to `path` through an OutputFile (atomically, never
// over one of `inputs`); throws Error when it cannot.
void write_html_report(const Analysis& analysis, const std::filesystem::path& path,
                       const std::vector<std::filesystem::path>& inputs = {},
                       const HtmlReportOptions& options = {});

// Writes every figure of the report (those of render_html_report, in the page's
// order) into the folder `dir` as NN-<title>.svg, drawn by the embedded Vega runtime
// under `node`, and NN-<title>.pdf converted from it by `rsvg-convert`, which embeds
// the fonts. Creates `dir` when missing; replaces files of the same names there and
// leaves other files. Nothing is written to `dir` unless every figure is: they are
// made in a temporary folder inside it and moved into place at the end. `progress`
// gets a line to show now and then. Throws ConfigError (exit 3) for a `dir` that is
// empty, not a folder or not writable, NotSupportedError (exit 6) when node or
// rsvg-convert is missing or the build has no runtimes, and Error when drawing
// fails. Returns the files written.
std::vector<std::filesystem::path> write_figure_files(
    const Analysis& analysis, const std::filesystem::path& dir, const HtmlReportOptions& options = {},
    const std::function<void(const std::string&)>& progress = {});

// What an analysis writer is given: the analysis and what its caller shows beside
// it. Each writer reads the members meant for it and ignores the others.
struct AnalysisOutput {
  explicit AnalysisOutput(const Analysis& analyzed) : analysis(analyzed) {}
  const Analysis& analysis;
  bool points = false;  // json: every setting's metrics and 95 % intervals
  // json: members added to the document beside the analysis's own (the CLI's
  // "predicted" and "warnings").
  nlohmann::json json_members = nlohmann::json::object();
  std::string text_after_tables;  // tables: printed after them (the CLI's predictions)
  HtmlReportOptions html;         // html: what the page holds besides the analysis
};

// The analysis formats: tables (format_analysis_tables), json (to_json, contract in
// docs/analysis.md) and html (render_html_report), then any a host or the CLI added
// with analysis_writers().add(). Registering is not synchronised: add writers before
// any thread writes.
using AnalysisWriter = WriterRegistry<const AnalysisOutput&>::Writer;
WriterRegistry<const AnalysisOutput&>& analysis_writers();

}  // namespace dvfslab
