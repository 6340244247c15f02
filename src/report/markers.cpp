#include "report/markers.hpp"

#include "report/chart_encoding.hpp"

namespace dvfslab::report_detail {

using nlohmann::json;

std::optional<double> marker_position(const CaseAnalysis& c, const PointSummary& p, Knob x,
                                      const MeasuredClocks& measured) {
  if (const auto value = knob_value(p.setting, x)) return *value;
  if (x != Knob::sm && x != Knob::mem) return std::nullopt;
  const auto& clocks = x == Knob::sm ? measured.sm_mhz : measured.mem_mhz;
  const auto found = clocks.find({c.key, p.setting});
  return found == clocks.end() ? std::nullopt : std::optional<double>(found->second);
}

json marker_layers(const json& x, const json& y) {
  const json shapes = {{"domain", json::array({"default", "optimum"})},
                       {"range", json::array({"square", "diamond"})}};
  const auto marker = [&](const char* name, const char* kind, const char* filter, bool filled, int size) {
    return json{{"name", name},
                {"transform", json::array({{{"filter", filter}}})},
                {"mark",
                 {{"type", "point"},
                  {"filled", filled},
                  {"size", size},
                  {"strokeWidth", 2},
                  {"color", "black"},
                  {"opacity", 1}}},
                {"encoding",
                 {{"x", x},
                  {"y", y},
                  {"shape", {{"datum", kind}, {"type", "nominal"}, {"title", nullptr}, {"scale", shapes}}},
                  {"tooltip", tooltip()}}}};
  };
  return {{"layer", json::array({marker("default_marker", "default", "datum.baseline", false, 260),
                                 marker("optimum_marker", "optimum", "datum.optimum", true, 90)})}};
}

}  // namespace dvfslab::report_detail
