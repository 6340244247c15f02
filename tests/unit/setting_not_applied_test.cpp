// A setting the GPU did not apply (its clock differed with no power or thermal limit
// to explain it) is never an answer: not the analysis's optimum, not a search's.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "sweep/search_evidence.hpp"

namespace dvfslab {
namespace {

ResultRow row(int sm_mhz, double power_w, bool clock_mismatch, bool power_throttle = false) {
  ResultRow r;
  r.source = "test";
  r.gpu = "Test GPU";
  r.workload_case = {"resnet50", 64, Mode::train, Precision::fp32};
  r.item_unit = "images";
  r.items_per_iteration = 64;
  r.setting.sm_mhz = sm_mhz;
  r.time_per_iteration_s = 1.0;
  r.mean_power_w = power_w;
  r.energy_per_iteration_j = power_w;
  r.flags.clock_mismatch = clock_mismatch;
  r.flags.power_throttle = power_throttle;
  return r;
}

std::optional<int> optimum_clock(const std::vector<ResultRow>& rows) {
  const Analysis analysis = analyze(rows);
  const CaseAnalysis& c = analysis.cases.at(0);
  if (!c.optimum) return std::nullopt;
  return c.points[*c.optimum].setting.sm_mhz;
}

TEST(SettingNotApplied, IsNeverTheAnalysisOptimumButStaysAPoint) {
  // 900 MHz reads least energy, but the GPU ran another clock there.
  const std::vector<ResultRow> rows{row(1500, 300, false), row(1200, 250, false), row(900, 200, true)};
  EXPECT_EQ(optimum_clock(rows), 1200);
  EXPECT_EQ(analyze(rows).cases.at(0).points.size(), 3u) << "reported, with its flag";
  EXPECT_EQ(optimum_clock({row(1500, 300, false), row(1200, 250, false), row(900, 200, true, true)}), 900)
      << "the power cap explains the clock: the setting was applied";
  EXPECT_EQ(optimum_clock({row(1500, 300, true)}), std::nullopt) << "no applied setting, no optimum";
}

TEST(SettingNotApplied, EachCaseThatMeasuredOneGetsANoteNamingThem) {
  EXPECT_TRUE(not_applied_notes(analyze({row(1500, 300, false), row(1200, 250, true, true)})).empty())
      << "a power-capped clock was applied";
  std::vector<ResultRow> rows{row(1500, 300, false), row(900, 200, true)};
  rows.back().sm_mhz_mean = 1497;
  const auto one = not_applied_notes(analyze(rows));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_NE(one[0].find("resnet50 train fp32 b64 on Test GPU: 1 setting the GPU did not apply"),
            std::string::npos)
      << one[0];
  EXPECT_NE(one[0].find("is never the optimum: sm=900 mem=default pl=default (ran at 1497 MHz)"),
            std::string::npos)
      << one[0];
  for (int mhz : {800, 700, 600, 500}) rows.push_back(row(mhz, 150, true));
  const auto five = not_applied_notes(analyze(rows));
  ASSERT_EQ(five.size(), 1u);
  EXPECT_NE(five[0].find("5 settings the GPU did not apply"), std::string::npos) << five[0];
  EXPECT_NE(five[0].find(" and 2 more"), std::string::npos) << "three named, the rest counted: " << five[0];
}

const Case search_case{"line", 1, Mode::train, Precision::fp32};

PointOutcome outcome(const Setting& setting, double energy_per_item_j, bool clock_mismatch) {
  PointOutcome o;
  o.point = ScheduledPoint{search_case, setting, PointRole::grid, 0, 1};
  o.repetitions = 1;
  o.energy_per_item_j_series = {energy_per_item_j};
  o.energy_per_item_j = energy_per_item_j;
  o.items_per_s = 1.0;
  o.items_per_s_series = {1.0};
  o.flags.clock_mismatch = clock_mismatch;
  return o;
}

TEST(SettingNotApplied, ASearchTreatsItAsOutOfBoundsAndDoesNotMeasureItAgain) {
  const Setting low{900, std::nullopt, std::nullopt};
  const Setting high{1500, std::nullopt, std::nullopt};
  const std::vector<PointOutcome> outcomes{outcome(Setting{}, 1.0, false), outcome(high, 0.9, false),
                                           outcome(low, 0.5, true)};
  search_detail::CaseEvidence evidence(search_case, outcomes, parse_objective("energy"), MeasurePolicy{},
                                       StrategyOptions{});
  EXPECT_EQ(evidence.compare(low, high), search_detail::Comparison::greater);
  EXPECT_EQ(evidence.best(), high);
  EXPECT_FALSE(evidence.look(low).value);
}

}  // namespace
}  // namespace dvfslab
