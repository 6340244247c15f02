#pragma once
// The report's charts: Vega-Lite specifications per GPU × workload.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dvfslab/analysis.hpp"
#include "dvfslab/report.hpp"

namespace dvfslab::report_detail {

struct Figure {
  std::string id;       // unique in the page: "figure-12"
  nlohmann::json spec;  // Vega-Lite; its data is the group's named data set
  // The points of the data set it plots, {"field": ..., "equal": ...}; null for all of
  // them. Kept out of the specification, so figures of one kind share a template.
  nlohmann::json select = nullptr;
};

// One GPU × workload (× mode × precision): its cases (one per batch size) and charts.
struct FigureGroup {
  // "points" (one GPU × workload, the layout described below), "normalised" (one GPU's
  // cases relative to their defaults) or "summary" (every network's optimum); the
  // latter two lay out their data as report/normalised_data.hpp describes.
  std::string kind = "points";
  std::string heading;  // "NVIDIA H200 · resnet50 train fp32"
  bool simulated = false;
  std::vector<const CaseAnalysis*> cases;
  // The group's charts all plot the same points, one per setting of each case (the
  // mean over its repetitions), so the page holds them once, as columns:
  // {"labels": [text...], "columns": {name: [value per point]}}; the columns batch,
  // series and memory_series are indices into labels, pareto/baseline/optimum are
  // 0 or 1, and measured values keep 6 significant digits. The page's script turns
  // them back into one record per point, the data set `data_name` of every spec.
  std::string data_name;  // "group-3"
  nlohmann::json data;
  std::vector<Figure> figures;
  std::vector<std::string> notes;  // shown above the figures: what they leave out and why
};

// Per group: power, throughput and energy per item against the varied knob (core
// clock, else power limit, else memory clock), one line per batch size (and per
// other varied knob); when both core and memory clock varied, energy against the
// memory clock and a core × memory energy heatmap; and the (time, energy) Pareto plot.
// `probe_order` numbers the points a search probed (HtmlReportOptions::probe_order);
// `predicted` adds the columns predicted_energy/_low/_high and their line and band
// to the energy figure, labelled `prediction_label`. `measured_sm_mhz` and
// `measured_mem_mhz` place the default and optimum markers of a setting that left
// the core or memory clock uncontrolled (HtmlReportOptions::measured_sm_mhz, _mem_mhz).
std::vector<FigureGroup> build_figure_groups(
    const Analysis& analysis, const std::map<std::pair<CaseKey, Setting>, int>& probe_order = {},
    const std::map<std::pair<CaseKey, Setting>, PredictedEnergy>& predicted = {},
    const std::string& prediction_label = {},
    const std::map<std::pair<CaseKey, Setting>, double>& measured_sm_mhz = {},
    const std::map<std::pair<CaseKey, Setting>, double>& measured_mem_mhz = {});

// The figures that compare cases on one scale, numbered from `first_figure_id`: the
// summary of every network's optimum against its default (absent where no case has
// an optimum), then per GPU its cases relative to their defaults (absent where no
// case has a measured default): one figure per case, per network of several cases one
// per ratio (energy, time, power) overlaying them, and the Pareto fronts of all its cases.
std::vector<FigureGroup> build_comparison_groups(
    const Analysis& analysis, int first_figure_id,
    const std::map<std::pair<CaseKey, Setting>, int>& probe_order = {},
    const std::map<std::pair<CaseKey, Setting>, double>& measured_sm_mhz = {},
    const std::map<std::pair<CaseKey, Setting>, double>& measured_mem_mhz = {});

}  // namespace dvfslab::report_detail
