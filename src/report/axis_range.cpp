#include "report/axis_range.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace dvfslab::report_detail {
namespace {

// The value at quantile q of sorted values, interpolated linearly between neighbours.
double quantile(const std::vector<int>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

}  // namespace

std::optional<AxisRange> readable_range(const std::vector<const CaseAnalysis*>& cases, Knob x,
                                        const MeasuredClocks& measured) {
  std::set<int> distinct;
  std::vector<double> needed;
  for (const CaseAnalysis* c : cases) {
    for (const PointSummary& p : c->points) {
      if (const auto value = knob_value(p.setting, x)) distinct.insert(*value);
    }
    if (const auto value = marker_position(*c, c->points[c->baseline], x, measured)) needed.push_back(*value);
    if (c->optimum) {
      if (const auto value = marker_position(*c, c->points[*c->optimum], x, measured))
        needed.push_back(*value);
    }
  }
  if (distinct.size() < 3) return std::nullopt;
  const std::vector<int> sorted(distinct.begin(), distinct.end());
  const double first_quartile = quantile(sorted, 0.25), third_quartile = quantile(sorted, 0.75);
  AxisRange core{first_quartile, third_quartile};
  for (double value : needed) {
    core.low = std::min(core.low, value);
    core.high = std::max(core.high, value);
  }
  const double fence = 3 * (third_quartile - first_quartile);
  return AxisRange{core.low - fence, core.high + fence};
}

std::string clip_note_text(const std::set<int>& values, bool all_probes, Knob x) {
  std::vector<std::string> listed;
  for (int value : values) listed.push_back(std::to_string(value));
  const std::size_t count = values.size();
  return fmt::format("{} {}{} outside the axis: {} {}", count, all_probes ? "probe" : "setting",
                     count == 1 ? "" : "s", fmt::join(listed, ", "), x == Knob::power_limit ? "W" : "MHz");
}

nlohmann::json in_view_filter() { return {{"filter", "!datum.outside"}}; }

nlohmann::json clip_note_layer(const char* field) {
  return {{"name", "clip_note"},
          {"transform", nlohmann::json::array({{{"filter", fmt::format("isValid(datum.{})", field)}}})},
          {"mark",
           {{"type", "text"},
            {"align", "right"},
            {"baseline", "top"},
            {"x", {{"expr", "width - 4"}}},
            {"y", 4},
            {"fontSize", 10},
            {"color", "#b00020"}}},
          {"encoding", {{"text", {{"field", field}}}}}};
}

}  // namespace dvfslab::report_detail
