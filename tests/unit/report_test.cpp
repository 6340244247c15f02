// The HTML report's content: escaping of data, safe embedding, the charts drawn
// per group and SIMULATED labels. (Rendering in a browser: tests/browser/.)
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/report.hpp"
#include "report/escape.hpp"
#include "report/figures.hpp"
#include "report/scripts.hpp"

namespace dvfslab {
namespace {

ResultRow row(const std::string& workload, int batch, std::optional<int> sm, std::optional<int> mem,
              double time_s, double power_w, bool simulated = false) {
  ResultRow r;
  r.source = "test";
  r.gpu = "Test GPU";
  r.simulated = simulated;
  r.workload_case = {workload, batch, Mode::infer, Precision::fp16};
  r.item_unit = "images";
  r.items_per_iteration = batch;
  r.setting = {sm, mem, std::nullopt};
  r.time_per_iteration_s = time_s;
  r.mean_power_w = power_w;
  r.energy_per_iteration_j = time_s * power_w;
  return r;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(ReportEscape, HtmlJsonAndScriptText) {
  EXPECT_EQ(report_detail::html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  const std::string json = report_detail::json_for_script(nlohmann::json{{"name", "</script><!-- & >"}});
  EXPECT_EQ(json.find('<'), std::string::npos);
  EXPECT_EQ(json.find('>'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(json).at("name"), "</script><!-- & >");
  EXPECT_EQ(report_detail::javascript_for_script("x='</SCRIPT>';y=a<b"), "x='<\\/SCRIPT>';y=a<b");
}

TEST(ReportFigures, OneDimensionalSweepGetsFourChartsPerGroup) {
  const Analysis a = analyze(
      {row("resnet50", 64, 1380, std::nullopt, 1.0, 300), row("resnet50", 64, 945, std::nullopt, 1.5, 150),
       row("resnet50", 128, 1380, std::nullopt, 2.0, 300), row("vgg16", 64, 1380, std::nullopt, 1.0, 250)});
  const auto groups = report_detail::build_figure_groups(a);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].cases.size(), 2u);  // both batch sizes of resnet50 in one group
  EXPECT_EQ(groups[0].figures.size(), 4u);
  EXPECT_EQ(groups[0].heading, "Test GPU · resnet50 infer fp16");
  // x is the core clock; one line per batch size. The points are the group's data
  // set, held once for all its charts (issue 11 item 16).
  const auto& energy = groups[0].figures[2].spec;
  EXPECT_EQ(energy["layer"][0]["encoding"]["x"]["field"], "sm_mhz");
  EXPECT_EQ(energy["data"]["name"], groups[0].data_name);
  const auto& data = groups[0].data;
  EXPECT_EQ(data["labels"][data["columns"]["series"][0].get<std::size_t>()], "batch 64");
  EXPECT_EQ(data["columns"]["time_s"].size(), 3u);  // one point per setting of each case
}

TEST(ReportFigures, PredictedEnergyGetsItsOwnColumnsLineAndBandOnlyInItsCase) {
  const Analysis a = analyze({row("resnet50", 64, 1380, std::nullopt, 1.0, 300),
                              row("resnet50", 64, 945, std::nullopt, 1.5, 150),
                              row("vgg16", 64, 1380, std::nullopt, 1.0, 250)});
  std::map<std::pair<CaseKey, Setting>, PredictedEnergy> predicted;
  for (const Setting& setting : {a.cases[0].points[0].setting, a.cases[0].points[1].setting})
    predicted[{a.cases[0].key, setting}] = {4.0, 3.5, 4.5};
  const auto groups = report_detail::build_figure_groups(a, {}, predicted, "predicted (m.json)");
  ASSERT_EQ(groups.size(), 2u);
  const auto& columns = groups[0].data["columns"];
  ASSERT_TRUE(columns.contains("predicted_energy"));
  EXPECT_EQ(columns["predicted_energy"], nlohmann::json::array({4.0, 4.0}));
  EXPECT_EQ(columns["predicted_energy_high"], nlohmann::json::array({4.5, 4.5}));
  EXPECT_NE(columns["energy_per_item_j"][0], 4.0);  // measured values stay measured
  const auto& energy_layers = groups[0].figures[2].spec["layer"];
  ASSERT_EQ(energy_layers.size(), 5u);
  EXPECT_EQ(energy_layers[3]["mark"]["type"], "area");
  EXPECT_EQ(energy_layers[4]["encoding"]["strokeDash"]["datum"], "predicted (m.json)");
  EXPECT_EQ(groups[0].figures[0].spec["layer"].size(), 3u);  // power: measured only
  EXPECT_FALSE(groups[1].data["columns"].contains("predicted_energy"));
  EXPECT_EQ(groups[1].figures[2].spec["layer"].size(), 3u);
}

TEST(ReportFigures, CoreTimesMemoryGridAddsMemoryFigureAndHeatmap) {
  std::vector<ResultRow> rows;
  for (int sm : {1000, 1500}) {
    for (int mem : {3500, 5000})
      rows.push_back(row("googlenet", 32, sm, mem, 1000.0 / sm + 1000.0 / mem, 0.1 * sm + 0.01 * mem));
  }
  const auto groups = report_detail::build_figure_groups(analyze(rows));
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].figures.size(), 6u);
  EXPECT_EQ(groups[0].figures[3].spec["layer"][0]["encoding"]["x"]["field"], "mem_mhz");
  EXPECT_EQ(groups[0].figures[4].spec["mark"], "rect");
}

// Axes from the points a reader needs (docs/report.md): Tukey's far-out fences
// around the quartiles widened to the default and optimum.
TEST(ReportFigures, AFarSettingLeavesTheAxesWithANoteWhileAnEvenSweepKeepsEveryPoint) {
  const auto group_of = [](const std::vector<int>& clocks) {
    std::vector<ResultRow> rows;
    for (int sm : clocks) {
      rows.push_back(row("resnet50", 64, sm, std::nullopt, 1000.0 / sm, 100 + 0.2 * sm));
      rows.back().is_default = sm == clocks.back();
    }
    return report_detail::build_figure_groups(analyze(rows)).at(0);
  };
  const auto far = group_of({135, 900, 930, 960, 990, 1020, 1050, 1080});
  const auto& columns = far.data["columns"];
  ASSERT_TRUE(columns.contains("outside"));
  EXPECT_EQ(columns["outside"], nlohmann::json::array({0, 0, 0, 0, 0, 0, 0, 1}));  // settings descend
  EXPECT_EQ(far.data["labels"][columns["clip_note"][0].get<std::size_t>()],
            "1 setting outside the axis: 135 MHz");
  EXPECT_TRUE(columns["clip_note"][1].is_null());
  // The default (1080 MHz) is also the optimum here: both marker layers are drawn.
  const auto& markers = far.figures[2].spec["layer"][1]["layer"];
  EXPECT_EQ(markers[0]["name"], "default_marker");
  EXPECT_EQ(markers[1]["name"], "optimum_marker");

  const auto even = group_of({135, 270, 405, 540, 675, 810, 945, 1080});
  EXPECT_FALSE(even.data["columns"].contains("outside"));
  EXPECT_FALSE(even.data["columns"].contains("clip_note"));
}

// Intervals (docs/report.md): each mean's 95 % half-width in a <metric>_ci column,
// drawn as error bars that the page's control switches through `show_intervals`.
TEST(ReportFigures, RepeatedSettingsGetIntervalColumnsAndErrorBarsOnTheLineAndParetoCharts) {
  std::vector<ResultRow> rows;
  for (int repetition : {0, 1}) {
    for (int sm : {1380, 945}) {
      rows.push_back(row("resnet50", 64, sm, std::nullopt, 1000.0 / sm + 0.01 * repetition, 300));
      rows.back().repetition = repetition;
    }
  }
  const auto group = report_detail::build_figure_groups(analyze(rows)).at(0);
  const auto& columns = group.data["columns"];
  ASSERT_TRUE(columns.contains("energy_per_item_j_ci"));
  EXPECT_GT(columns["time_s_ci"][0].get<double>(), 0.0);
  EXPECT_TRUE(columns.contains("power_w_ci"));
  EXPECT_TRUE(columns.contains("throughput_ci"));
  const auto& energy = group.figures[2].spec;
  EXPECT_EQ(energy["params"][0]["name"], "show_intervals");
  const auto& bars = energy["layer"][2]["layer"][0];
  EXPECT_EQ(bars["name"], "interval");
  EXPECT_EQ(bars["mark"]["type"], "rule");
  EXPECT_EQ(bars["encoding"]["y"]["field"], "energy_per_item_j_low");
  EXPECT_EQ(bars["encoding"]["y2"]["field"], "energy_per_item_j_high");
  EXPECT_NE(bars["transform"][1]["filter"].get<std::string>().find("show_intervals"), std::string::npos);
  const auto& pareto = group.figures[3].spec;
  const auto& pareto_bars = pareto["layer"][4]["layer"];
  EXPECT_EQ(pareto_bars[0]["encoding"]["y2"]["field"], "energy_per_item_j_high");
  EXPECT_EQ(pareto_bars[1]["encoding"]["x2"]["field"], "time_s_high");

  // One repetition per setting has no interval: no columns.
  const auto single = report_detail::build_figure_groups(analyze(
      {row("resnet50", 64, 1380, std::nullopt, 1.0, 300), row("resnet50", 64, 945, std::nullopt, 1.5, 150)}));
  EXPECT_FALSE(single.at(0).data["columns"].contains("energy_per_item_j_ci"));
}

// A default that left the memory clock uncontrolled stands on the memory-clock axis
// at the memory clock measured there (HtmlReportOptions::measured_mem_mhz).
TEST(ReportFigures, ADefaultWithoutAMemoryClockIsMarkedAtTheMeasuredOne) {
  std::vector<ResultRow> rows;
  for (int sm : {1000, 1500}) {
    for (int mem : {3500, 5000})
      rows.push_back(row("googlenet", 32, sm, mem, 1000.0 / sm + 1000.0 / mem, 200));
  }
  rows.push_back(row("googlenet", 32, std::nullopt, std::nullopt, 1.5, 300));
  rows.back().is_default = true;
  const Analysis a = analyze(rows);
  const Setting default_setting{};
  const auto group =
      report_detail::build_figure_groups(a, {}, {}, {}, {{{a.cases[0].key, default_setting}, 1600.0}},
                                         {{{a.cases[0].key, default_setting}, 5001.0}})
          .at(0);
  const auto& columns = group.data["columns"];
  ASSERT_TRUE(columns.contains("marker_mem_mhz"));
  const auto& baseline = columns["baseline"];
  const auto at_default = std::find(baseline.begin(), baseline.end(), 1) - baseline.begin();
  EXPECT_EQ(columns["marker_mem_mhz"][at_default], 5001.0);
  EXPECT_TRUE(columns["mem_mhz"][at_default].is_null());
  const auto& memory_chart = group.figures[3].spec;
  EXPECT_EQ(memory_chart["layer"][0]["encoding"]["x"]["field"], "mem_mhz");
  EXPECT_EQ(memory_chart["layer"][1]["layer"][0]["encoding"]["x"]["field"], "marker_mem_mhz");

  // Without a measured memory clock (a sweep table) the column stays absent.
  EXPECT_FALSE(report_detail::build_figure_groups(a).at(0).data["columns"].contains("marker_mem_mhz"));
}

TEST(ReportFigures, EverySimulatedChartTitleSaysSimulated) {
  const auto groups =
      report_detail::build_figure_groups(analyze({row("alexnet", 128, 1380, std::nullopt, 1.0, 300, true),
                                                  row("alexnet", 128, 945, std::nullopt, 1.5, 150, true)}));
  for (const auto& figure : groups.at(0).figures) {
    EXPECT_EQ(figure.spec["title"]["text"].get<std::string>().rfind("SIMULATED", 0), 0u)
        << figure.spec["title"];
  }
}

TEST(ReportHtml, DataStringsAreEscapedAndEveryChartHasItsPlace) {
  const std::string hostile = "<script>alert('x')</script>";
  const Analysis a = analyze({row(hostile, 64, 1380, std::nullopt, 1.0, 300, true),
                              row(hostile, 64, 945, std::nullopt, 1.5, 150, true)});
  if (report_detail::embedded_report_scripts().empty()) {
    // Built without web/node_modules: the report must refuse, saying how to fix it.
    EXPECT_THROW(render_html_report(a), NotSupportedError);
    return;
  }
  const std::string html = render_html_report(a);
  EXPECT_EQ(html.find(hostile), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), std::string::npos);
  // The group's 4 charts and the summary of its optimum.
  EXPECT_EQ(count(html, "<div class=\"figure\""), 5u);
  EXPECT_NE(html.find("data-expected=\"5\""), std::string::npos);
  EXPECT_NE(html.find("SIMULATED data"), std::string::npos);
  // Self-contained: the three runtimes are inline and nothing is fetched.
  EXPECT_EQ(count(html, "<script data-runtime="), 3u);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(count(html, "</script>"), count(html, "<script"));
}

}  // namespace
}  // namespace dvfslab
