#pragma once
// The range of the x knob a reader needs, and the note naming the points left out.
//
// Tukey's rule for "far out" values (the box plot's convention, not a constant
// fitted to a data set): the core spans the middle half of the group's settings
// (the first to the third quartile of their distinct knob values) widened to every
// case's default and optimum, and the axis reaches three interquartile ranges beyond
// it on either side. An evenly spaced sweep keeps every point (its interquartile
// range is half its range), the defaults and optima are always shown, and only a
// setting far from the rest (a search's first probe at the lowest clock, below the
// valley it then finds, at many times the valley's energy and time) is left outside,
// so that it cannot squeeze the valley into a corner.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dvfslab/analysis.hpp"
#include "report/figure_shape.hpp"
#include "report/markers.hpp"

namespace dvfslab::report_detail {

struct AxisRange {
  double low = 0, high = 0;
  bool contains(int value) const { return value >= low && value <= high; }
};

// Absent (every point shown) with fewer than three distinct values of `x`.
std::optional<AxisRange> readable_range(const std::vector<const CaseAnalysis*>& cases, Knob x,
                                        const MeasuredClocks& measured);

// "1 probe outside the axis: 135 MHz": the note every chart that leaves points out carries.
std::string clip_note_text(const std::set<int>& values, bool all_probes, Knob x);

// The transform that keeps the points inside the axes (the data's `outside` column).
nlohmann::json in_view_filter();

// The note (the data's column `field`), drawn in the chart's top right corner: points
// are never left out silently.
nlohmann::json clip_note_layer(const char* field = "clip_note");

}  // namespace dvfslab::report_detail
