// Settings that ran at the same clocks are one operating point to the search
// evidence: their windows are pooled, they compare as a tie, and measuring another
// of them does not change which is the best.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "measured_point.hpp"
#include "sweep/search_evidence.hpp"

namespace dvfslab::search_detail {
namespace {

const Case operating_case{"operating point", 1, Mode::train, Precision::fp32};

// A power limit above the draw and one that binds at the same clock as a lower SM
// clock, all run at 1275 MHz; another clock for contrast.
const Setting uncapped{1275, std::nullopt, 700};
const Setting limit_not_binding{1275, std::nullopt, 400};
const Setting capped_to_same_clock{1440, std::nullopt, 300};
const Setting other_clock{1320, std::nullopt, 700};

PointOutcome ran_at(const Setting& setting, double sm_mhz, const std::vector<double>& energy_per_item_j) {
  PointOutcome outcome = testing::measured_point(operating_case, setting, energy_per_item_j);
  outcome.mean_power_w = energy_per_item_j.back();
  outcome.sm_mhz_mean = sm_mhz;
  outcome.mem_mhz_mean = 3201.0;
  return outcome;
}

CaseEvidence evidence_of(const std::vector<PointOutcome>& outcomes) {
  return CaseEvidence(operating_case, outcomes, parse_objective("energy"), MeasurePolicy{},
                      StrategyOptions{});
}

TEST(OperatingPoint, SettingsRunAtTheSameClocksShareOneValueFromAllTheirWindows) {
  // The clocks as a meter averages them: equal to the MHz, not to the last bit.
  const auto evidence = evidence_of(
      {ran_at(uncapped, 1275.0000004, {1.00, 1.02}), ran_at(limit_not_binding, 1274.9999996, {0.97}),
       ran_at(capped_to_same_clock, 1275.0, {1.01}), ran_at(other_clock, 1320, {0.99})});
  const auto& readings = evidence.readings();
  const double pooled = *readings.at(uncapped).value;
  EXPECT_EQ(*readings.at(limit_not_binding).value, pooled);
  EXPECT_EQ(*readings.at(capped_to_same_clock).value, pooled);
  EXPECT_EQ(readings.at(uncapped).operating_point.energy_per_item_j.size(), 4u);
  // Their own windows stay theirs (what each was measured, and the window cap).
  EXPECT_EQ(readings.at(limit_not_binding).energy_per_item_j.size(), 1u);
  EXPECT_NE(*readings.at(other_clock).value, pooled);
}

TEST(OperatingPoint, TwoSettingsOfOneOperatingPointCompareAsATieWithoutAnotherWindow) {
  // 2 % apart in one window each: without the clocks, a difference to settle.
  auto evidence = evidence_of({ran_at(uncapped, 1275, {1.00}), ran_at(limit_not_binding, 1275, {0.98})});
  EXPECT_EQ(evidence.compare(limit_not_binding, uncapped), Comparison::tie);

  std::vector<PointOutcome> without_clocks{ran_at(uncapped, 1275, {1.00}),
                                           ran_at(limit_not_binding, 1275, {0.98})};
  for (auto& outcome : without_clocks) outcome.sm_mhz_mean.reset();
  auto unpooled = evidence_of(without_clocks);
  EXPECT_THROW(unpooled.compare(limit_not_binding, uncapped), ProbeNeeded);
}

TEST(OperatingPoint, MeasuringAnotherSettingOfTheBestPointDoesNotMoveTheBest) {
  std::vector<PointOutcome> outcomes{ran_at(other_clock, 1320, {1.05}), ran_at(uncapped, 1275, {1.00})};
  EXPECT_EQ(evidence_of(outcomes).best(), uncapped);
  // A luckier window at the same clocks, of a setting ordered before it: pooled, and
  // the setting measured first stays the best.
  outcomes.push_back(ran_at(limit_not_binding, 1275, {0.96}));
  EXPECT_EQ(evidence_of(outcomes).best(), uncapped);
  EXPECT_EQ(evidence_of(outcomes).best_among({limit_not_binding, uncapped}), uncapped);
}

TEST(OperatingPoint, ClocksThatAreNoClockKeyNothing) {
  for (const double nonsense : {std::nan(""), std::numeric_limits<double>::infinity(), -5.0, 1e300}) {
    auto evidence =
        evidence_of({ran_at(uncapped, nonsense, {1.00}), ran_at(limit_not_binding, nonsense, {0.98})});
    EXPECT_FALSE(evidence.readings().at(uncapped).clocks) << nonsense;
    EXPECT_THROW(evidence.compare(limit_not_binding, uncapped), ProbeNeeded) << nonsense;
  }
}

TEST(OperatingPoint, AnotherWorkloadPowerProfileAtTheSameClocksIsNotPooled) {
  Setting profiled = uncapped;
  profiled.workload_profile = 1;
  auto evidence = evidence_of({ran_at(uncapped, 1275, {1.00}), ran_at(profiled, 1275, {0.98})});
  EXPECT_EQ(evidence.readings().at(profiled).operating_point.energy_per_item_j.size(), 1u);
  EXPECT_THROW(evidence.compare(profiled, uncapped), ProbeNeeded);
}

TEST(OperatingPoint, ADifferentMemoryClockTheBaselineOrASettingNotAppliedIsNotPooled) {
  PointOutcome other_memory = ran_at(limit_not_binding, 1275, {0.90});
  other_memory.mem_mhz_mean = 2201.0;
  PointOutcome not_applied = ran_at(capped_to_same_clock, 1275, {0.80});
  not_applied.flags.clock_mismatch = true;  // no power or thermal limit to explain it
  PointOutcome baseline = ran_at(Setting{}, 1275, {0.85});
  const auto evidence = evidence_of({ran_at(uncapped, 1275, {1.00}), other_memory, not_applied, baseline});
  const auto& readings = evidence.readings();
  EXPECT_EQ(readings.at(uncapped).operating_point.energy_per_item_j.size(), 1u);
  EXPECT_NE(*readings.at(limit_not_binding).value, *readings.at(uncapped).value);
  EXPECT_FALSE(readings.at(capped_to_same_clock).value.has_value());
  EXPECT_EQ(readings.at(Setting{}).operating_point.energy_per_item_j.size(), 1u);
}

}  // namespace
}  // namespace dvfslab::search_detail
