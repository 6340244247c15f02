// Workload power profiles in the analysis: each measured profile against the
// baseline and against the tuned optimum (the best setting without a profile), in
// the tables and the JSON.
#include <gtest/gtest.h>

#include "dvfslab/analysis.hpp"
#include "dvfslab/report.hpp"

namespace dvfslab {
namespace {

ResultRow row(const Setting& setting, double time_s, double power_w, bool is_default = false) {
  ResultRow r;
  r.source = "test";
  r.gpu = "Test GPU";
  r.workload_case = {"llama", 8, Mode::infer, Precision::bf16};
  r.item_unit = "tokens";
  r.items_per_iteration = 8;
  r.setting = setting;
  r.is_default = is_default;
  r.time_per_iteration_s = time_s;
  r.mean_power_w = power_w;
  r.energy_per_iteration_j = time_s * power_w;
  return r;
}

Setting profile(int id) {
  Setting setting;
  setting.workload_profile = id;
  return setting;
}

// Default 1.0 s at 600 W (600 J); 1200 MHz 1.1 s at 450 W (495 J, the tuned
// optimum); max-q 1.3 s at 420 W (546 J, the best a profile does); compute 1.0 s at
// 610 W (610 J).
std::vector<ResultRow> rows() {
  return {row(Setting{}, 1.0, 600.0, true), row(Setting{1200, std::nullopt, std::nullopt}, 1.1, 450.0),
          row(profile(1), 1.3, 420.0), row(profile(2), 1.0, 610.0)};
}

TEST(AnalysisProfiles, EachProfileIsComparedWithTheBaselineAndTheTunedOptimum) {
  const Analysis analysis = analyze(rows());
  ASSERT_EQ(analysis.cases.size(), 1u);
  const CaseAnalysis& c = analysis.cases.front();
  ASSERT_TRUE(c.optimum && c.tuned_optimum);
  EXPECT_EQ(c.points[*c.tuned_optimum].setting.sm_mhz, 1200);
  EXPECT_EQ(*c.optimum, *c.tuned_optimum);
  ASSERT_EQ(c.profiles.size(), 2u);
  const ProfileComparison& max_q = c.profiles[0];
  EXPECT_EQ(c.points[max_q.point].setting.workload_profile, 1);
  EXPECT_NEAR(max_q.energy_saving_pct, 9.0, 1e-9);  // 546 J against 600 J
  EXPECT_NEAR(max_q.time_change_pct, 30.0, 1e-9);
  EXPECT_NEAR(*max_q.tuned_energy_saving_pct, (546.0 - 495.0) / 546.0 * 100.0, 1e-9);
  EXPECT_NEAR(*max_q.tuned_time_change_pct, (1.1 - 1.3) / 1.3 * 100.0, 1e-9);
  EXPECT_NEAR(c.profiles[1].energy_saving_pct, -610.0 / 6.0 + 100.0, 1e-9);
}

TEST(AnalysisProfiles, AProfileThatBeatsTheClocksIsTheOptimumButNotTheTunedOne) {
  std::vector<ResultRow> input = rows();
  input.push_back(row(profile(3), 1.05, 400.0));  // memory-bound: 420 J
  const CaseAnalysis c = analyze(input).cases.front();
  EXPECT_EQ(c.points[*c.optimum].setting.workload_profile, 3);
  EXPECT_EQ(c.points[*c.tuned_optimum].setting.sm_mhz, 1200);
  EXPECT_LT(*c.profiles.back().tuned_energy_saving_pct, 0.0) << "the profile uses less than the tuned setting";
}

TEST(AnalysisProfiles, WithoutAMarkedDefaultTheBaselineIsNeverAProfile) {
  std::vector<ResultRow> input = rows();
  input.front().is_default = false;
  const CaseAnalysis c = analyze(input).cases.front();
  EXPECT_EQ(c.points[c.baseline].setting, Setting{});
  EXPECT_EQ(c.baseline_kind, BaselineKind::highest_setting);
}

TEST(AnalysisProfiles, TablesAndJsonCarryTheComparisonOnlyWhereProfilesWereMeasured) {
  const Analysis analysis = analyze(rows());
  const std::string tables = format_analysis_tables(analysis);
  EXPECT_NE(tables.find("Workload power profiles: against the baseline"), std::string::npos) << tables;
  EXPECT_NE(tables.find("max-q"), std::string::npos);
  EXPECT_NE(tables.find("+9.0 %"), std::string::npos) << tables;
  const nlohmann::json json = to_json(analysis);
  const nlohmann::json& profiles = json.at("cases").at(0).at("profiles");
  ASSERT_EQ(profiles.size(), 2u);
  EXPECT_EQ(profiles.at(0).at("workload_profile"), "max-q");
  EXPECT_NEAR(profiles.at(0).at("energy_saving_pct").get<double>(), 9.0, 1e-9);
  EXPECT_EQ(json.at("cases").at(0).at("tuned_optimum").at("sm_mhz"), 1200);

  const Analysis without = analyze({rows()[0], rows()[1]});
  EXPECT_EQ(format_analysis_tables(without).find("Workload power profiles"), std::string::npos);
  EXPECT_FALSE(to_json(without).at("cases").at(0).contains("profiles"));
}

}  // namespace
}  // namespace dvfslab
