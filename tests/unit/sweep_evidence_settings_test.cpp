// The search evidence's chosen constants (EvidenceSettings) each change what a
// comparison of two measured settings does: measure one again, or let the means decide.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "measured_point.hpp"
#include "sweep/search_evidence.hpp"

namespace dvfslab::search_detail {
namespace {

const Case evidence_case{"evidence", 1, Mode::train, Precision::fp32};
const Setting lower{600, std::nullopt, std::nullopt};
const Setting higher{615, std::nullopt, std::nullopt};

PointOutcome measured(const Setting& setting, const std::vector<double>& energy_per_item_j) {
  return testing::measured_point(evidence_case, setting, energy_per_item_j);
}

// What comparing `lower` with `higher` does: the setting it measures again, if any.
std::optional<Setting> probe_of(const std::vector<PointOutcome>& outcomes, const EvidenceSettings& settings,
                                Comparison* result = nullptr) {
  CaseEvidence evidence(evidence_case, outcomes, parse_objective("energy"), MeasurePolicy{},
                        StrategyOptions{}, settings);
  try {
    const Comparison comparison = evidence.compare(lower, higher);
    if (result) *result = comparison;
    return std::nullopt;
  } catch (const ProbeNeeded& probe) {
    return probe.setting;
  }
}

TEST(EvidenceSettings, TheAssumedNoiseDecidesWhetherOneWindowEachIsEnough) {
  // 3.3 % apart, one window each: the prior noise is all the evidence has.
  const std::vector<PointOutcome> outcomes{measured(lower, {0.90}), measured(higher, {0.93})};
  Comparison comparison = Comparison::tie;
  EXPECT_EQ(probe_of(outcomes, EvidenceSettings{}, &comparison), std::nullopt) << "1 % assumed: apart";
  EXPECT_EQ(comparison, Comparison::less);
  EvidenceSettings noisier;
  noisier.prior_relative_noise = 0.02;
  EXPECT_TRUE(probe_of(outcomes, noisier).has_value()) << "2 % assumed: within the noise";
}

TEST(EvidenceSettings, AnUncertainDifferenceIsMeasuredAgainUnlessItIsBelowTheResolution) {
  // Half a percent apart with about 1 % of assumed noise: uncertain.
  const std::vector<PointOutcome> outcomes{measured(lower, {0.900}), measured(higher, {0.905})};
  EXPECT_TRUE(probe_of(outcomes, EvidenceSettings{}).has_value());
  EvidenceSettings coarse;
  coarse.resolution = 0.05;
  Comparison comparison = Comparison::tie;
  EXPECT_EQ(probe_of(outcomes, coarse, &comparison), std::nullopt);
  EXPECT_EQ(comparison, Comparison::less) << "the means decide";
}

TEST(EvidenceSettings, TheWindowCapIsThePlansMostPlusTheExtraWindows) {
  // Four noisy windows each (the default plan's most is 1, plus 3 extra: the cap).
  const std::vector<PointOutcome> outcomes{measured(lower, {0.88, 0.92, 0.88, 0.92}),
                                           measured(higher, {0.885, 0.925, 0.885, 0.925})};
  Comparison comparison = Comparison::tie;
  EXPECT_EQ(probe_of(outcomes, EvidenceSettings{}, &comparison), std::nullopt) << "both at the cap";
  EXPECT_EQ(comparison, Comparison::less);
  EvidenceSettings patient;
  patient.extra_windows = 5;
  EXPECT_TRUE(probe_of(outcomes, patient).has_value());
}

}  // namespace
}  // namespace dvfslab::search_detail
