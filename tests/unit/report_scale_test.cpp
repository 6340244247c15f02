// The HTML report's size follows the settings and cases of a study, not its
// measured rows (issue 11 item 16: 100 k rows gave a 171 MB page), and raw rows
// appear only on request, as many as asked.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/report.hpp"
#include "report/scripts.hpp"

namespace dvfslab {
namespace {

bool have_runtimes() { return !report_detail::embedded_report_scripts().empty(); }

std::size_t runtime_bytes() {
  std::size_t total = 0;
  for (const auto& script : report_detail::embedded_report_scripts()) total += script.text.size();
  return total;
}

// `workloads` cases of a core × memory grid, each setting measured `repetitions` times.
std::vector<ResultRow> grid_rows(int workloads, int core_clocks, int memory_clocks, int repetitions) {
  std::vector<ResultRow> rows;
  for (int w = 0; w < workloads; ++w) {
    for (int sm = 0; sm < core_clocks; ++sm) {
      for (int mem = 0; mem < memory_clocks; ++mem) {
        for (int rep = 0; rep < repetitions; ++rep) {
          ResultRow r;
          r.source = "test";
          r.gpu = "Test GPU";
          r.workload_case = {"net-" + std::to_string(w), 32, Mode::train, Precision::fp32};
          r.item_unit = "images";
          r.items_per_iteration = 32;
          r.setting = {600 + 10 * sm, 800 + 10 * mem, std::nullopt};
          r.repetition = rep;
          r.time_per_iteration_s = (1.0 + 0.001 * rep) * (300.0 / r.setting.sm_mhz.value() + 0.1 * w + 0.01);
          r.mean_power_w = 100.0 + 0.1 * sm + 0.01 * mem + 0.01 * rep;
          r.energy_per_iteration_j = r.time_per_iteration_s * r.mean_power_w;
          rows.push_back(std::move(r));
        }
      }
    }
  }
  return rows;
}

nlohmann::json page_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"dvfslab-data\">";
  const auto begin = html.find(open);
  const auto end = html.find("</script>", begin);
  if (begin == std::string::npos || end == std::string::npos) return nullptr;
  return nlohmann::json::parse(html.substr(begin + open.size(), end - begin - open.size()));
}

TEST(ReportScale, TenTimesTheRepetitionsAddNothingToThePage) {
  if (!have_runtimes()) GTEST_SKIP() << "built without the report's runtimes";
  const std::vector<ResultRow> few = grid_rows(2, 20, 5, 10);    // 2,000 rows
  const std::vector<ResultRow> many = grid_rows(2, 20, 5, 100);  // 20,000 rows, the same 200 settings
  const std::string small = render_html_report(analyze(few));
  const std::string large = render_html_report(analyze(many));
  EXPECT_LT(static_cast<double>(large.size()), 1.05 * static_cast<double>(small.size()))
      << small.size() << " bytes for 2 k rows, " << large.size() << " for 20 k";
}

// The charts' six copies of every point cost about 3 KB a setting before.
TEST(ReportScale, AGridOfFiveThousandSettingsCostsUnderSevenHundredBytesASetting) {
  if (!have_runtimes()) GTEST_SKIP() << "built without the report's runtimes";
  const std::string html = render_html_report(analyze(grid_rows(1, 100, 50, 1)));
  const std::size_t data_bytes = html.size() - runtime_bytes();
  EXPECT_LT(data_bytes, 700u * 5000u) << data_bytes << " bytes besides the runtimes";
  const nlohmann::json data = page_data(html);
  ASSERT_TRUE(data.is_object());
  // The points, and the summary of the optimum (no row is marked as the default, so
  // nothing is normalised).
  ASSERT_EQ(data["groups"].size(), 2u);
  EXPECT_EQ(data["groups"][0]["columns"]["time_s"].size(), 5000u);
  // The charts' share: one copy of the points, as columns.
  const std::size_t chart_bytes =
      data["groups"].dump().size() + data["figures"].dump().size() + data["templates"].dump().size();
  EXPECT_LT(chart_bytes, 100u * 5000u) << chart_bytes << " bytes of chart data";
}

TEST(ReportScale, ThousandsOfChartsShareAFewSpecificationTemplates) {
  if (!have_runtimes()) GTEST_SKIP() << "built without the report's runtimes";
  const std::string html = render_html_report(analyze(grid_rows(400, 3, 1, 1)));
  const nlohmann::json data = page_data(html);
  ASSERT_TRUE(data.is_object());
  // 400 workloads × 4 charts and the summary of their optima; none relative to the
  // default, as no row is marked as the default.
  EXPECT_EQ(data["figures"].size(), 1601u);
  EXPECT_LE(data["templates"].size(), 5u);
  EXPECT_NE(html.find("data-expected=\"1601\""), std::string::npos);
}

TEST(ReportScale, PerSettingStatisticsAreLeftOutOnlyAboveTheLimit) {
  if (!have_runtimes()) GTEST_SKIP() << "built without the report's runtimes";
  const nlohmann::json small = page_data(render_html_report(analyze(grid_rows(1, 10, 10, 1))));
  ASSERT_TRUE(small.is_object());
  EXPECT_EQ(small["analysis"]["cases"][0]["points"].size(), 100u);
  const std::string html = render_html_report(analyze(grid_rows(1, 110, 100, 1)));  // 11,000 settings
  const nlohmann::json large = page_data(html);
  ASSERT_TRUE(large.is_object());
  EXPECT_FALSE(large["analysis"]["cases"][0].contains("points"));
  EXPECT_NE(html.find("analyze --json --points"), std::string::npos);
  EXPECT_EQ(large["groups"][0]["columns"]["time_s"].size(), 11000u);  // the charts still plot every setting
}

TEST(ReportRawRows, NoneUnlessAskedThenExactlyTheRowsGiven) {
  if (!have_runtimes()) GTEST_SKIP() << "built without the report's runtimes";
  const std::vector<ResultRow> rows = grid_rows(1, 10, 10, 1);
  const Analysis analysis = analyze(rows);
  const std::string plain = render_html_report(analysis);
  EXPECT_EQ(plain.find("id=\"raw-rows\""), std::string::npos);
  EXPECT_FALSE(page_data(plain).contains("raw_rows"));

  const std::string html =
      render_html_report(analysis, {.raw_rows = std::span<const ResultRow>(rows).first(5),
                                    .measured_rows = rows.size(),
                                    .probe_order = {},
                                    .predicted_energy = {},
                                    .prediction_label = {}});
  EXPECT_NE(html.find("the first 5 of 100"), std::string::npos);
  const nlohmann::json data = page_data(html);
  ASSERT_EQ(data["raw_rows"].size(), 5u);
  EXPECT_EQ(data["raw_rows"][4]["setting"], "600/840/-");
  EXPECT_EQ(data["raw_rows"][4]["time_per_iteration_s"], rows[4].time_per_iteration_s);
}

}  // namespace
}  // namespace dvfslab
