#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/sweep.hpp"
#include "kernel_workload.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

using testing::kernel_registry;

const char* const sweep_plan = R"(
[knobs]
sm_mhz = { count = 4, min = 600 }
[[cases]]
workloads = ["kernel"]
batch_sizes = [16, 64]
modes = ["train", "infer"]
[measure]
warmup_iterations = 2
duration_s = 2.0
repetitions = 2
settle_s = 0.2
drift_every = 5
)";

class SweepRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override { options_.state_dir = dir_ / "state"; }
  SweepResult sweep(const Plan& plan, Store& store, const WorkloadRegistry& registry) {
    SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
    gpu.set_read_only(read_only_);
    const ControlState before = gpu.control_state();
    auto progress = make_silent_progress_reporter();
    SweepResult result = run_sweep(gpu, plan, registry, store, options_, *progress);
    EXPECT_EQ(gpu.control_state(), before) << "the GPU was not left as found";
    return result;
  }

  dvfslab::testing::ScratchDir scratch_;
  const std::filesystem::path& dir_ = scratch_.path();
  SweepOptions options_;
  bool read_only_ = false;
};

using Key = std::tuple<Case, Setting, int>;

// The simulated energy counter advances once per sensor period (0.1 s on the V100),
// so a window's counter energy can be one period's energy off depending on where the
// window falls between updates: runs that measure the same point at other moments
// agree to about period / window (5 % for 2 s windows), not exactly.
constexpr double counter_tolerance = 1.5 * 0.1 / 2.0;

std::map<Key, double> energy_by_point(Store& store) {
  std::map<Key, double> out;
  for (const auto& row : store.result_rows()) {
    const Key key{row.workload_case, row.setting, row.repetition};
    EXPECT_EQ(out.count(key), 0u) << "duplicate point " << to_string(row.workload_case) << " "
                                  << to_string(row.setting) << " rep " << row.repetition;
    out[key] = row.energy_per_iteration_j;
  }
  return out;
}

TEST(StopRule, MinimumThenConfidenceThenMaximum) {
  MeasurePolicy policy;
  policy.repetitions = 2;
  policy.max_repetitions = 4;
  const std::vector<double> one{1.0}, tight{1.0, 1.001}, loose{1.0, 1.5}, four{1.0, 1.5, 0.7, 1.2};
  EXPECT_TRUE(needs_another_repetition(policy, one));
  EXPECT_FALSE(needs_another_repetition(policy, loose)) << "without a target the minimum is enough";
  policy.ci_target_pct = 1.0;
  EXPECT_FALSE(needs_another_repetition(policy, tight));
  EXPECT_TRUE(needs_another_repetition(policy, loose));
  EXPECT_FALSE(needs_another_repetition(policy, four)) << "the maximum ends it";
}

TEST_F(SweepRunnerTest, FullSweepStoresEveryPointOnceAndRestoresTheGpu) {
  const Plan plan = parse_plan_text(sweep_plan, "sweep.toml");
  Store store(dir_ / "full.sqlite");
  const SweepResult result = sweep(plan, store, kernel_registry());
  // 4 cases × (default + 4 clocks) grid points, drift at the start, the end and after every 5th.
  EXPECT_EQ(result.points_measured, 20u + 2 + 3);
  EXPECT_EQ(result.measurements, 20u * 2 + 5);
  EXPECT_EQ(result.clock_mismatches, 0u);
  ASSERT_TRUE(result.drift_pct.has_value());
  EXPECT_LT(std::abs(*result.drift_pct), 100 * counter_tolerance);
  const auto energies = energy_by_point(store);
  EXPECT_EQ(energies.size(), 40u);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, RunStatus::finished);
  EXPECT_EQ(runs[0].plan_text, plan.source_text);
  EXPECT_TRUE(runs[0].gpu.simulated);
}

TEST_F(SweepRunnerTest, ResumeAfterAFailureMeasuresOnlyWhatIsMissing) {
  const Plan plan = parse_plan_text(sweep_plan, "sweep.toml");
  Store whole(dir_ / "whole.sqlite");
  sweep(plan, whole, kernel_registry());

  Store interrupted(dir_ / "interrupted.sqlite");
  int calls_left = 40;
  EXPECT_THROW(sweep(plan, interrupted, kernel_registry(&calls_left)), Error);
  ASSERT_EQ(interrupted.runs().at(0).status, RunStatus::failed);
  const std::size_t before_resume = interrupted.result_rows().size();
  EXPECT_GT(before_resume, 0u);
  EXPECT_LT(before_resume, 40u);

  options_.resume = true;
  const SweepResult resumed = sweep(plan, interrupted, kernel_registry());
  EXPECT_TRUE(resumed.resumed);
  EXPECT_GT(resumed.points_skipped, 0u);
  ASSERT_EQ(interrupted.runs().size(), 1u);
  EXPECT_EQ(interrupted.runs()[0].status, RunStatus::finished);

  const auto expected = energy_by_point(whole);
  const auto actual = energy_by_point(interrupted);
  ASSERT_EQ(actual.size(), expected.size());
  for (const auto& [key, energy] : expected) {
    ASSERT_EQ(actual.count(key), 1u);
    EXPECT_NEAR(actual.at(key), energy, counter_tolerance * energy);
  }
}

TEST_F(SweepRunnerTest, ShardsTogetherHoldTheUnshardedRun) {
  const Plan plan = parse_plan_text(sweep_plan, "sweep.toml");
  Store whole(dir_ / "whole.sqlite");
  sweep(plan, whole, kernel_registry());
  std::map<Key, double> merged;
  for (int i = 1; i <= 3; ++i) {
    Store shard(dir_ / ("shard" + std::to_string(i) + ".sqlite"));
    options_.shard = parse_shard(std::to_string(i) + "/3");
    sweep(plan, shard, kernel_registry());
    for (const auto& [key, energy] : energy_by_point(shard)) {
      EXPECT_TRUE(merged.emplace(key, energy).second) << "a point is in two shards";
    }
  }
  const auto expected = energy_by_point(whole);
  ASSERT_EQ(merged.size(), expected.size());
  for (const auto& [key, energy] : expected) EXPECT_NEAR(merged.at(key), energy, counter_tolerance * energy);
}

TEST_F(SweepRunnerTest, ReadOnlyRefusesClockChangesBeforeAnythingRunsButNotTheDefault) {
  read_only_ = true;
  Store store(dir_ / "read_only.sqlite");
  EXPECT_THROW(sweep(parse_plan_text(sweep_plan, "sweep.toml"), store, kernel_registry()), PermissionError);
  EXPECT_TRUE(store.runs().empty()) << "nothing may run before the refusal";
  const Plan default_only =
      parse_plan_text("[[cases]]\nworkloads = \"kernel\"\nbatch_sizes = [16, 64]\n", "d.toml");
  const SweepResult result = sweep(default_only, store, kernel_registry());
  EXPECT_EQ(result.points_measured, 2u + 2);
}

TEST_F(SweepRunnerTest, UnknownWorkloadIsRefusedBeforeAnythingRuns) {
  Store store(dir_ / "unknown.sqlite");
  const Plan plan =
      parse_plan_text("[[cases]]\nworkloads = [\"kernel\", \"resnet1000\"]\nbatch_sizes = 1\n", "u.toml");
  try {
    sweep(plan, store, kernel_registry());
    FAIL() << "an unknown workload was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown workload 'resnet1000'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("choose one of kernel"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(store.runs().empty());
}

// Proposes the given settings of the plan's first case, one window each, in order.
class SequenceStrategy final : public SearchStrategy {
 public:
  explicit SequenceStrategy(std::vector<Setting> settings) : settings_(std::move(settings)) {}
  std::string name() const override { return "sequence"; }
  std::vector<ScheduledPoint> propose(const SearchSpace& space, std::span<const PointOutcome> measured) override {
    if (measured.size() >= settings_.size()) return {};
    return {ScheduledPoint{space.cases.front(), settings_[measured.size()], PointRole::grid, 0, 1}};
  }

 private:
  std::vector<Setting> settings_;
};

// Simulated GPU seconds of a run that measures `settings` in order under a plan
// with a 4 s warm-up, 1 s windows and a 0.5 s settle (and the given cool-down).
double seconds_measuring(const std::vector<Setting>& settings, double cooldown_s,
                         const std::filesystem::path& dir) {
  const Plan plan = parse_plan_text(
      "[knobs]\nsm_mhz = [900, 1200]\n[[cases]]\nworkloads = \"kernel\"\nbatch_sizes = 16\n"
      "[measure]\nwarmup_s = 4.0\nduration_s = 1.0\nsettle_s = 0.5\ndrift_check = false\ncooldown_s = " +
          std::to_string(cooldown_s) + "\n",
      "sequence.toml");
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  Store store(dir / "sequence.sqlite");
  SweepOptions options;
  options.state_dir = dir / "state";
  SequenceStrategy strategy(settings);
  auto progress = make_silent_progress_reporter();
  const SweepResult result = run_sweep(gpu, plan, kernel_registry(), store, options, *progress, strategy);
  EXPECT_EQ(result.measurements, settings.size());
  std::filesystem::remove(dir / "sequence.sqlite");
  return result.gpu_seconds;
}

TEST_F(SweepRunnerTest, APointThatContinuesTheOneJustMeasuredIsNotWarmedUpAgain) {
  const Setting low{900, {}, {}};
  const Setting high{1200, {}, {}};
  // One settle, one warm-up, three windows (a window ends at the iteration that
  // crosses its second).
  const double continued = seconds_measuring({low, low, low}, 0, dir_);
  EXPECT_GE(continued, 0.5 + 4 + 3);
  EXPECT_LT(continued, 0.5 + 4 + 3 + 0.5);
  // Each change of setting pays the settle and the warm-up again.
  EXPECT_GE(seconds_measuring({low, high, low}, 0, dir_), 3 * (0.5 + 4 + 1));
  // So does a point after an idle cool-down.
  EXPECT_GE(seconds_measuring({low, low, low}, 0.25, dir_), 3 * (4 + 1 + 0.25));
}

}  // namespace
}  // namespace dvfslab
