// `report --style paper`: what it changes in a figure's Vega-Lite specification.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/figure_style.hpp"

namespace dvfslab {
namespace {

using nlohmann::json;
using report_detail::apply_figure_style;

// A chart as the report builds one: a plot size, a text layer of its own size, a
// faceted size in a nested spec, and an expression that names the width.
json chart() {
  return json::parse(R"json({
    "title": {"text": "energy per item vs core clock (MHz)", "subtitle": "sim · resnet50"},
    "width": 340, "height": 220,
    "layer": [
      {"mark": {"type": "line", "strokeWidth": 1.5}},
      {"mark": {"type": "text", "fontSize": 10, "x": {"expr": "width - 4"}}},
      {"spec": {"width": 200, "height": 160}, "encoding": {"y": {"axis": {"labelLimit": 420}}}}
    ]})json");
}

TEST(ReportFigureStyle, ScreenLeavesTheSpecificationAsItIs) {
  json spec = chart();
  apply_figure_style(spec, FigureStyle::screen);
  EXPECT_EQ(spec, chart());
}

TEST(ReportFigureStyle, PaperScalesEveryPlotCapsEveryTextAndSetsTheFont) {
  json spec = chart();
  apply_figure_style(spec, FigureStyle::paper);
  EXPECT_EQ(spec["width"], 190);
  EXPECT_EQ(spec["height"], 123);
  EXPECT_EQ(spec["layer"][2]["spec"]["width"], 112);
  EXPECT_EQ(spec["layer"][2]["spec"]["height"], 89);
  EXPECT_EQ(spec["layer"][2]["encoding"]["y"]["axis"]["labelLimit"], 235);
  EXPECT_EQ(spec["layer"][1]["mark"]["fontSize"], 8);
  // Neither a stroke width nor an expression is a size to scale.
  EXPECT_EQ(spec["layer"][0]["mark"]["strokeWidth"], 1.5);
  EXPECT_EQ(spec["layer"][1]["mark"]["x"]["expr"], "width - 4");
  EXPECT_EQ(spec["title"], chart()["title"]);

  const json& config = spec.at("config");
  EXPECT_EQ(config["font"], "DejaVu Sans");
  EXPECT_EQ(config["title"]["fontSize"], 9);
  EXPECT_EQ(config["title"]["subtitleFontSize"], 8);
  for (const char* part : {"axis", "legend", "header"}) {
    EXPECT_EQ(config[part]["labelFontSize"], 8) << part;
    EXPECT_EQ(config[part]["titleFontSize"], 8) << part;
  }
  EXPECT_EQ(config["legend"]["orient"], "bottom");
  EXPECT_EQ(config["text"]["fontSize"], 8);
}

}  // namespace
}  // namespace dvfslab
