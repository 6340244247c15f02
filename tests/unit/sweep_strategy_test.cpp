// The strategy seam: a strategy that is not the grid gets the outcomes of what it
// proposed and decides what comes next; stop rules are criteria asked in order;
// objectives are one registry.
#include <gtest/gtest.h>

#include <algorithm>

#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/sim_workloads.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/sweep.hpp"
#include "outcome_recorder.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

// Three SM clocks of one ResNet-50 inference case, measured as `measure` says.
Plan three_clock_plan(const std::string& measure, const std::string& name) {
  return parse_plan_text(std::string(R"(
[knobs]
sm_mhz = { count = 3, min = 600 }
[[cases]]
workloads = ["resnet50"]
batch_sizes = [32]
modes = ["infer"]
[measure]
duration_s = 1.0
)") + measure,
                         name);
}

// Proposes the highest setting, then (having seen its outcome) the lowest, then stops.
class HighThenLow final : public SearchStrategy {
 public:
  std::string name() const override { return "high-then-low"; }
  std::vector<ScheduledPoint> propose(const SearchSpace& space,
                                      std::span<const PointOutcome> measured) override {
    seen.push_back(measured.size());
    if (measured.empty())
      return {ScheduledPoint{space.cases.front(), space.settings.back(), PointRole::grid, 0}};
    if (measured.size() == 1) {
      EXPECT_TRUE(measured.front().energy_per_item_j) << "the outcome reaches the strategy";
      return {ScheduledPoint{space.cases.front(), space.settings.front(), PointRole::grid, 0}};
    }
    return {};
  }
  std::vector<std::size_t> seen;
};

TEST(SearchStrategy, ACustomStrategyMeasuresWhatItProposesInOrderAndSeesEachOutcome) {
  testing::ScratchDir scratch;
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  WorkloadRegistry registry;
  add_sim_workloads(registry);
  const Plan plan = three_clock_plan("repetitions = 2\nmax_repetitions = 2\n", "custom.toml");
  Store store(scratch / "custom.sqlite");
  auto progress = make_silent_progress_reporter();
  HighThenLow strategy;
  const SweepResult result = run_sweep(gpu, plan, registry, store, SweepOptions{}, *progress, strategy);
  EXPECT_EQ(result.points_measured, 2u);
  EXPECT_EQ(result.measurements, 4u) << "the stop rule still asks for two repetitions";
  EXPECT_EQ(strategy.seen, (std::vector<std::size_t>{0, 1, 2}));
  std::vector<std::pair<int, int>> order;  // (order index, SM clock)
  for (const auto& row : store.measurements()) {
    order.emplace_back(row.point.order_index, row.point.point.setting.sm_mhz.value_or(0));
  }
  EXPECT_EQ(order, (std::vector<std::pair<int, int>>{{0, 1380}, {0, 1380}, {1, 600}, {1, 600}}));
}

// Proposes the highest setting twice, one run of the runner apart.
class SameSettingTwice final : public SearchStrategy {
 public:
  std::string name() const override { return "same-setting-twice"; }
  std::vector<ScheduledPoint> propose(const SearchSpace& space,
                                      std::span<const PointOutcome> measured) override {
    if (measured.size() >= 2) return {};
    return {ScheduledPoint{space.cases.front(), space.settings.back(), PointRole::grid, 0}};
  }
};

TEST(SearchStrategy, APointProposedAgainIsMeasuredAgainAndItsOutcomeCarriesEveryWindow) {
  testing::ScratchDir scratch;
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  WorkloadRegistry registry;
  add_sim_workloads(registry);
  const Plan plan = three_clock_plan("drift_check = false\n", "again.toml");
  Store store(scratch / "again.sqlite");
  auto progress = make_silent_progress_reporter();
  SameSettingTwice strategy;
  const SweepResult result = run_sweep(gpu, plan, registry, store, SweepOptions{}, *progress, strategy);
  EXPECT_EQ(result.points_measured, 2u) << "the second proposal was not skipped as already measured";
  EXPECT_EQ(result.measurements, 2u);
  EXPECT_EQ(store.measurements().size(), 2u);
}

// Asks for the highest setting one window at a time (twice), then the lowest under
// the stop rule.
class OneWindowProbes final : public SearchStrategy {
 public:
  std::string name() const override { return "one-window-probes"; }
  std::vector<ScheduledPoint> propose(const SearchSpace& space,
                                      std::span<const PointOutcome> measured) override {
    if (measured.size() < 2)
      return {ScheduledPoint{space.cases.front(), space.settings.back(), PointRole::grid, 0, 1}};
    if (measured.size() == 2)
      return {ScheduledPoint{space.cases.front(), space.settings.front(), PointRole::grid, 0}};
    return {};
  }
};

TEST(SearchStrategy, AProposalGetsTheWindowsItAsksForAndZeroMeansTheStopRule) {
  testing::ScratchDir scratch;
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  WorkloadRegistry registry;
  add_sim_workloads(registry);
  const Plan plan =
      three_clock_plan("repetitions = 3\nmax_repetitions = 3\ndrift_check = false\n", "windows.toml");
  Store store(scratch / "windows.sqlite");
  testing::OutcomeRecorder outcomes;
  OneWindowProbes strategy;
  const SweepResult result = run_sweep(gpu, plan, registry, store, SweepOptions{}, outcomes, strategy);
  ASSERT_EQ(outcomes.all.size(), 3u);
  EXPECT_EQ(outcomes.all[0].repetitions, 1) << "one window, although the plan asks for three";
  EXPECT_EQ(outcomes.all[1].repetitions, 1);
  EXPECT_EQ(outcomes.all[1].energy_per_item_j_series.size(), 2u) << "the setting's windows so far";
  ASSERT_EQ(outcomes.all[1].items_per_s_series.size(), 2u) << "and their throughput";
  EXPECT_EQ(outcomes.all[1].items_per_s_series.back(), *outcomes.all[1].items_per_s);
  EXPECT_EQ(outcomes.all[2].repetitions, 3) << "windows = 0: the plan's stop rule";
  EXPECT_EQ(outcomes.all[2].items_per_s_series.size(), 3u);
  EXPECT_EQ(result.measurements, 5u);
  EXPECT_EQ(store.measurements().size(), 5u);
}

// Stops as soon as a repetition's energy is below a threshold.
class BelowThreshold final : public StopCriterion {
 public:
  Verdict judge(std::span<const double> energy) const override {
    return !energy.empty() && energy.back() < 1.0 ? Verdict::enough : Verdict::undecided;
  }
};

TEST(StopRule, CriteriaAreAskedInOrderAndTheFirstDecidingOneWins) {
  MeasurePolicy policy;
  policy.repetitions = 1;
  policy.max_repetitions = 5;
  policy.ci_target_pct = 0.01;
  const std::vector<double> low_but_loose{5.0, 0.5};
  EXPECT_TRUE(make_stop_rule(policy).needs_another_repetition(low_but_loose));
  StopRule rule;
  rule.add(std::make_unique<BelowThreshold>());
  EXPECT_FALSE(rule.needs_another_repetition(low_but_loose)) << "the custom criterion decides first";
  EXPECT_FALSE(StopRule().needs_another_repetition(low_but_loose)) << "no criterion deciding means enough";
}

TEST(ObjectiveRegistry, EveryObjectiveIsInTheHelpAndSpellsBackToItself) {
  const std::string help = objective_help();
  for (const auto& definition : objectives()) {
    EXPECT_NE(help.find(std::string(definition.usage)), std::string::npos) << definition.name;
    const std::string text =
        definition.example.empty() ? std::string(definition.name) : std::string(definition.example);
    const Objective parsed = parse_objective(text);
    EXPECT_EQ(parsed.kind, definition.kind) << text;
    EXPECT_EQ(parse_objective(to_string(parsed)), parsed) << text;
    EXPECT_FALSE(describe(parsed).empty()) << text;
  }
}

TEST(SettingOrders, NamesParseBackAndUnknownOnesAreRefused) {
  for (const auto& order : setting_orders()) {
    const auto parsed = parse_order(order.name);
    ASSERT_TRUE(parsed) << order.name;
    EXPECT_EQ(setting_order(*parsed).name, order.name);
  }
  EXPECT_FALSE(parse_order("descending"));
}

}  // namespace
}  // namespace dvfslab
