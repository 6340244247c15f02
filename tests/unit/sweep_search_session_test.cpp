// The search session around a named strategy (one point at a time, budgets,
// allowed settings), the strategy recorded in a run's plan text, the probes in
// order and the confidence in the optimum.
#include <gtest/gtest.h>

#include "dvfslab/search.hpp"

namespace dvfslab {
namespace {

Setting sm(int mhz) { return Setting{mhz, std::nullopt, std::nullopt}; }

// Proposes every setting of the space, one batch per call, and remembers what it saw.
class EverySettingOnce final : public SearchStrategy {
 public:
  std::string name() const override { return "every"; }
  std::vector<ScheduledPoint> propose(const SearchSpace& space,
                                      std::span<const PointOutcome> measured) override {
    seen_outcomes.push_back(measured.size());
    seen_settings = space.settings;
    seen_cases = space.cases;
    if (proposed) return {};
    proposed = true;
    std::vector<ScheduledPoint> points;
    for (const Case& workload_case : space.cases) {
      for (const Setting& setting : space.settings)
        points.push_back({workload_case, setting, PointRole::grid, 0});
    }
    return points;
  }
  bool proposed = false;
  std::vector<std::size_t> seen_outcomes;
  std::vector<Setting> seen_settings;
  std::vector<Case> seen_cases;
};

SearchSpace space_of(std::vector<Case> cases, std::vector<Setting> settings) {
  SearchSpace space;
  space.cases = std::move(cases);
  space.settings = std::move(settings);
  return space;
}

PointOutcome outcome_of(const ScheduledPoint& point, std::vector<double> energies) {
  PointOutcome outcome;
  outcome.point = point;
  outcome.repetitions = static_cast<int>(energies.size());
  outcome.energy_per_item_j_series = std::move(energies);
  return outcome;
}

// Runs the session as the runner does: one proposal, measured, reported back.
std::vector<PointOutcome> drive(SearchSession& session, const SearchSpace& space, VirtualClock& clock,
                                double seconds_per_point = 1.0) {
  std::vector<PointOutcome> outcomes;
  for (auto batch = session.propose(space, outcomes); !batch.empty();
       batch = session.propose(space, outcomes)) {
    for (const auto& point : batch) {
      clock.advance(seconds_per_point);
      outcomes.push_back(outcome_of(point, {1.0}));
    }
  }
  return outcomes;
}

const Case resnet{"resnet50", 32, Mode::train, Precision::fp32};

TEST(SearchSession, TheStrategysBatchIsMeasuredOnePointAtATimeBeforeItIsAskedAgain) {
  VirtualClock clock;
  auto inner = std::make_unique<EverySettingOnce>();
  EverySettingOnce& strategy = *inner;
  SearchSession session(std::move(inner), {}, clock);
  const auto outcomes = drive(session, space_of({resnet}, {sm(600), sm(900)}), clock);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].point.setting, sm(600));
  EXPECT_EQ(strategy.seen_outcomes, (std::vector<std::size_t>{0, 2}))
      << "asked again once both were measured";
  EXPECT_EQ(session.outcomes().size(), 2u);
  EXPECT_FALSE(session.stopped_by_budget());
}

TEST(SearchSession, ThePointBudgetStopsBeforeANewSetting) {
  VirtualClock clock;
  SearchSession session(std::make_unique<EverySettingOnce>(), {2, std::nullopt, {}}, clock);
  const auto outcomes = drive(session, space_of({resnet}, {sm(600), sm(900), sm(1200)}), clock);
  EXPECT_EQ(outcomes.size(), 2u);
  EXPECT_TRUE(session.stopped_by_budget());
}

TEST(SearchSession, TheSecondsBudgetStartsNoPointAfterItIsSpent) {
  VirtualClock clock;
  SearchSession session(std::make_unique<EverySettingOnce>(), {std::nullopt, 2.5, {}}, clock);
  const auto outcomes = drive(session, space_of({resnet}, {sm(600), sm(900), sm(1200), sm(1500)}), clock);
  EXPECT_EQ(outcomes.size(), 3u) << "started at 0, 1 and 2 s; not at 3 s";
  EXPECT_TRUE(session.stopped_by_budget());
}

TEST(SearchSession, TheStrategyIsOfferedOnlyTheAllowedSettings) {
  VirtualClock clock;
  auto inner = std::make_unique<EverySettingOnce>();
  EverySettingOnce& strategy = *inner;
  SearchLimits limits;
  limits.allowed = [](const Case&, const Setting& setting) { return setting != sm(900); };
  SearchSession session(std::move(inner), limits, clock);
  drive(session, space_of({resnet}, {sm(600), sm(900), sm(1200)}), clock);
  EXPECT_EQ(strategy.seen_settings, (std::vector<Setting>{sm(600), sm(1200)}));
}

TEST(SearchPlanText, TheStrategyIsRecordedOnTheFirstLineAndAPlanWithoutOneIsTheGrid) {
  const std::string plan = "[plan]\nname = \"x\"\n";
  const std::string recorded = plan_text_with_strategy(plan, "golden");
  EXPECT_TRUE(recorded.ends_with(plan));
  EXPECT_EQ(strategy_of_plan_text(recorded), "golden");
  EXPECT_FALSE(strategy_of_plan_text(plan));
}

TEST(SearchProbes, EachSettingIsOneProbeInFirstMeasuredOrderWithAllItsRepetitions) {
  const ScheduledPoint low{resnet, sm(600), PointRole::grid, 0}, high{resnet, sm(900), PointRole::grid, 1};
  const ScheduledPoint drift{resnet, Setting{}, PointRole::drift, 2};
  const std::vector<PointOutcome> outcomes = {outcome_of(low, {2.0}), outcome_of(high, {3.0, 5.0}),
                                              outcome_of(drift, {9.0}), outcome_of(low, {2.0, 4.0})};
  const auto probes = probes_in_order(outcomes);
  ASSERT_EQ(probes.size(), 2u) << "a drift check is not a probe";
  EXPECT_EQ(probes[0].setting, sm(600));
  EXPECT_EQ(probes[0].order, 1);
  EXPECT_EQ(probes[0].repetitions, 2);
  EXPECT_DOUBLE_EQ(probes[0].energy_per_item_j, 3.0);
  EXPECT_EQ(probes[1].order, 2);
  EXPECT_DOUBLE_EQ(probes[1].energy_per_item_j, 4.0);
}

PointSummary summary(int mhz, double energy, double half_width, int repetitions) {
  PointSummary point;
  point.setting = sm(mhz);
  point.repetitions = repetitions;
  point.energy_per_item_j = {energy, repetitions > 1 ? std::optional<double>(half_width) : std::nullopt};
  point.time_per_iteration_s = {1.0, std::nullopt};
  return point;
}

CaseAnalysis analysis_of(std::vector<PointSummary> points, std::size_t optimum) {
  CaseAnalysis analysis;
  analysis.points = std::move(points);
  analysis.baseline = 0;
  analysis.optimum = optimum;
  return analysis;
}

TEST(SearchConfidence, AClearOptimumIsCertainAndATieWithinNoiseIsNot) {
  const Objective energy;
  const auto clear = analysis_of({summary(1200, 10.0, 0.01, 3), summary(900, 8.0, 0.01, 3)}, 1);
  EXPECT_GT(*optimum_confidence(clear, energy), 0.999);
  const auto tie = analysis_of({summary(1200, 8.2, 0.8, 3), summary(900, 8.0, 0.8, 3)}, 1);
  const double tied = *optimum_confidence(tie, energy);
  EXPECT_GT(tied, 0.5);
  EXPECT_LT(tied, 0.9);
}

TEST(SearchConfidence, APointMeasuredOnceBorrowsThePooledSpreadAndNoneRepeatedGivesNone) {
  const Objective energy;
  const auto borrowed = analysis_of({summary(1200, 8.1, 0.0, 1), summary(900, 8.0, 0.8, 3)}, 1);
  EXPECT_LT(*optimum_confidence(borrowed, energy), 0.99)
      << "the once-measured point is as noisy as the other";
  const auto single = analysis_of({summary(1200, 10.0, 0.0, 1), summary(900, 8.0, 0.0, 1)}, 1);
  EXPECT_FALSE(optimum_confidence(single, energy));
  CaseAnalysis none = single;
  none.optimum.reset();
  EXPECT_FALSE(optimum_confidence(none, energy));
}

}  // namespace
}  // namespace dvfslab
