#pragma once
// What a figure group's settings look like: which knobs vary, which one the charts
// put on the x axis, and the series (lines) the points fall into.
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dvfslab/analysis.hpp"

namespace dvfslab::report_detail {

enum class Knob { sm, mem, power_limit, none };

struct KnobInfo {
  const char* field;  // the data column: "sm_mhz"
  const char* title;  // the axis title: "core clock (MHz)"
};
KnobInfo info(Knob knob);

// The setting's value of `knob`; absent where it was left uncontrolled.
std::optional<int> knob_value(const Setting& s, Knob knob);

// Which knobs vary within a group, and what the charts put on the x axis.
struct GroupShape {
  std::set<int> sm, mem, power_limit, batches;
  Knob primary = Knob::none;
  bool memory_figures = false;  // core and memory clock both varied
};
GroupShape shape_of(const std::vector<const CaseAnalysis*>& cases);

// "128", or "-" for a sweep table's cases, which carry no batch size.
std::string batch_label(int batch);

// The line a point belongs to: its batch size and every varied knob not on the x axis.
std::string series_label(const GroupShape& shape, int batch, const Setting& s, Knob x);

struct SeriesStyle {
  std::size_t count = 0;
  std::optional<Knob> knob;  // the knob that tells the series apart, if any
};

// The series of a chart whose x axis is `x`, and the knob that tells them apart:
// the varied knob off the axis with the most values.
SeriesStyle series_style(const std::vector<const CaseAnalysis*>& cases, const GroupShape& shape, Knob x);

}  // namespace dvfslab::report_detail
