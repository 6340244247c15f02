// The built-in analysis writers write what analyze and report wrote before the
// registry: the tables, the JSON document with the caller's members, the page.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/report.hpp"

namespace dvfslab {
namespace {

Analysis two_settings() {
  std::vector<ResultRow> rows;
  for (const auto& [sm, time_s, power_w] : {std::tuple{1380, 1.0, 300.0}, std::tuple{945, 1.5, 150.0}}) {
    ResultRow row;
    row.source = "test";
    row.gpu = "Test GPU";
    row.workload_case = {"resnet50", 64, Mode::infer, Precision::fp16};
    row.item_unit = "images";
    row.items_per_iteration = 64;
    row.setting = {sm, std::nullopt, std::nullopt};
    row.time_per_iteration_s = time_s;
    row.mean_power_w = power_w;
    row.energy_per_iteration_j = time_s * power_w;
    rows.push_back(row);
  }
  return analyze(rows);
}

std::string written(const std::string& format, const AnalysisOutput& output) {
  std::ostringstream out;
  analysis_writers().find(format).write(output, out);
  return out.str();
}

TEST(AnalysisWriters, TablesAreTheTerminalTablesWithTheCallersTextAfterThem) {
  const Analysis analysis = two_settings();
  AnalysisOutput output(analysis);
  output.text_after_tables = "PREDICTED\n";
  EXPECT_EQ(written("tables", output), format_analysis_tables(analysis) + "PREDICTED\n");
}

TEST(AnalysisWriters, JsonIsTheAnalysisDocumentWithTheCallersMembersBesideIt) {
  const Analysis analysis = two_settings();
  AnalysisOutput output(analysis);
  output.points = true;
  output.json_members["warnings"] = nlohmann::json::array({"searched"});
  nlohmann::json expected = to_json(analysis, true);
  expected["warnings"] = nlohmann::json::array({"searched"});
  EXPECT_EQ(written("json", output), expected.dump(2) + "\n");
  EXPECT_EQ(written("json", AnalysisOutput(analysis)), to_json(analysis).dump(2) + "\n");
}

TEST(AnalysisWriters, TheBuiltInFormatsAreTablesJsonAndHtmlInThatOrder) {
  const auto names = analysis_writers().names();
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 3),
            (std::vector<std::string>{"tables", "json", "html"}));
  try {
    analysis_writers().add({"json", "a second json", [](const AnalysisOutput&, std::ostream&) {}});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "analysis format 'json' is registered already");
  }
}

}  // namespace
}  // namespace dvfslab
