#pragma once
// The Vega-Lite pieces every chart shares: axes, tooltip, the chart's frame and
// how its series are coloured.
#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "report/figure_shape.hpp"

namespace dvfslab::report_detail {

// Every measured value of a point, shown on hover.
nlohmann::json tooltip();

// Thinned tick labels: Vega hides every label that would overlap its neighbour, so a
// dense ordinal axis (110 clocks) keeps a readable subset.
nlohmann::json thinned_axis();

nlohmann::json axis(const char* field, const std::string& title, bool ordinal = false);

// The title names the quantity (and SIMULATED data); the subtitle the GPU and workload.
nlohmann::json base_spec(const std::string& title, const std::string& data_name);

// How lines are coloured. Up to the ten colours of the default palette, one colour
// per series, the legend in numeric order (the page's script ranks the labels
// "batch 128" < "batch 1024" into <series>_rank). More series than colours cannot
// be told apart by colour: then the colour is the knob that tells them apart
// (a core clock), on a continuous scale with one gradient legend.
nlohmann::json series_colour(const char* series_field, std::size_t series_count,
                             std::optional<Knob> series_knob);

}  // namespace dvfslab::report_detail
