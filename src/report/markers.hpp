#pragma once
// The default setting (each case's baseline) and the optimum: where their markers
// stand and how they are drawn.
#include <map>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "dvfslab/analysis.hpp"
#include "report/figure_shape.hpp"

namespace dvfslab::report_detail {

// The clocks measured at each setting that left them uncontrolled (HtmlReportOptions).
struct MeasuredClocks {
  std::map<std::pair<CaseKey, Setting>, double> sm_mhz;
  std::map<std::pair<CaseKey, Setting>, double> mem_mhz;
};

// Where a point's marker goes on the x knob's axis: its setting, or for a core or
// memory clock left uncontrolled, the clock measured there (for the default, the
// GPU's default clock as found).
std::optional<double> marker_position(const CaseAnalysis& c, const PointSummary& p, Knob x,
                                      const MeasuredClocks& measured);

// The default as an open square and the optimum as a filled diamond inside it, in
// their own layers (default_marker, optimum_marker) with one legend, so both show
// where they are the same setting.
nlohmann::json marker_layers(const nlohmann::json& x, const nlohmann::json& y);

}  // namespace dvfslab::report_detail
