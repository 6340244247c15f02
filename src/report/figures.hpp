#pragma once
// The report's charts: Vega-Lite specifications per GPU × workload.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dvfslab/analysis.hpp"

namespace dvfslab::report_detail {

struct Figure {
  std::string id;        // unique in the page: "figure-12"
  nlohmann::json spec;   // Vega-Lite, data inline
};

// One GPU × workload (× mode × precision): its cases (one per batch size) and charts.
struct FigureGroup {
  std::string heading;   // "NVIDIA H200 · resnet50 train fp32"
  bool simulated = false;
  std::vector<const CaseAnalysis*> cases;
  std::vector<Figure> figures;
};

// Per group: power, throughput and energy per item against the varied knob (core
// clock, else power limit, else memory clock), one line per batch size (and per
// other varied knob); when both core and memory clock varied, energy against the
// memory clock and a core × memory energy heatmap; and the (time, energy) Pareto plot.
std::vector<FigureGroup> build_figure_groups(const Analysis& analysis);

}  // namespace dvfslab::report_detail
