#include "report/figure_style.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace dvfslab::report_detail {
namespace {

using nlohmann::json;

json paper_config() {
  const json text = {{"labelFontSize", kPaperTextSize}, {"titleFontSize", kPaperTextSize}};
  json legend = text;
  legend["orient"] = "bottom";
  legend["direction"] = "horizontal";
  // Legends under the plot, one under the other, each of at most two columns: side by
  // side, or ten batch sizes in a row, they would run far wider than a column.
  legend["columns"] = 2;
  legend["layout"] = {{"bottom", {{"direction", "vertical"}, {"anchor", "start"}}}};
  legend["symbolSize"] = 40;
  return {{"font", "DejaVu Sans"},
          {"title", {{"fontSize", kPaperTitleSize}, {"subtitleFontSize", kPaperTextSize}}},
          {"axis", text},
          {"legend", legend},
          {"header", text},
          {"text", {{"fontSize", kPaperTextSize}}}};
}

// Scales every plot size and caps every text size a layer sets itself (a probe's
// number, a note of points off the axes), which the config cannot override.
void shrink(json& node) {
  if (node.is_array()) {
    for (json& item : node) shrink(item);
    return;
  }
  if (!node.is_object()) return;
  for (auto& [key, value] : node.items()) {
    if ((key == "width" || key == "height") && value.is_number()) {
      value = static_cast<int>(std::lround(value.get<double>() * kPaperScale));
    } else if (key == "fontSize" && value.is_number()) {
      value = std::min(value.get<double>(), static_cast<double>(kPaperTextSize));
    } else if (key == "labelLimit" && value.is_number()) {
      value = static_cast<int>(std::lround(value.get<double>() * kPaperScale));
    } else {
      shrink(value);
    }
  }
}

}  // namespace

void apply_figure_style(json& spec, FigureStyle style) {
  if (style == FigureStyle::screen) return;
  shrink(spec);
  spec["config"] = paper_config();
}

}  // namespace dvfslab::report_detail
