// The grid strategy measures exactly what the sweep measured before the strategy
// seam existed: the expected sequences below were recorded from the runner of
// commit a9ee4dd (schedule computed up front, measured in one loop) on sim:v100.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <string>
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

// Every measurement of the newest run, in the order it was recorded.
std::vector<std::string> measured_sequence(Store& store) {
  std::vector<std::string> sequence;
  std::int64_t newest = 0;
  const auto rows = store.measurements();
  for (const auto& row : rows) newest = std::max(newest, row.run_id);
  for (const auto& row : rows) {
    if (row.run_id != newest) continue;
    sequence.push_back(fmt::format("{} {} {} {} r{}", row.point.order_index,
                                   row.point.role == RecordRole::grid ? "grid" : "drift",
                                   to_string(row.point.point.workload_case),
                                   to_string(row.point.point.setting), row.point.point.repetition));
  }
  return sequence;
}

std::string plan_text(const std::string& knobs, const std::string& measure) {
  return fmt::format(R"(
[knobs]
{}
[[cases]]
workloads = ["kernel"]
batch_sizes = [16, 64]
modes = ["train", "infer"]
[measure]
warmup_iterations = 2
duration_s = 1.0
settle_s = 0.2
{}
)",
                     knobs, measure);
}

class GridStrategyTest : public ::testing::Test {
 protected:
  std::vector<std::string> sweep(const std::string& text, SweepOptions options, int* calls_left = nullptr) {
    options.state_dir = scratch_.path() / "state";
    const Plan plan = parse_plan_text(text, "grid.toml");
    SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
    Store store((scratch_.path() / "grid.sqlite").string());
    auto progress = make_silent_progress_reporter();
    try {
      run_sweep(gpu, plan, kernel_registry(calls_left), store, options, *progress);
    } catch (const Error&) {
      if (calls_left == nullptr) throw;
    }
    return measured_sequence(store);
  }

  testing::ScratchDir scratch_;
};

// Prints the sequence as C++ literals, for recording it.
std::string as_literals(const std::vector<std::string>& sequence) {
  std::string out;
  for (const auto& line : sequence) out += fmt::format("      \"{}\",\n", line);
  return out;
}

TEST_F(GridStrategyTest, RandomOrderWithDriftEveryThreePointsMeasuresTodaysSequence) {
  const auto actual = sweep(plan_text("sm_mhz = { count = 3, min = 600 }", "seed = 7\ndrift_every = 3"), {});
  const std::vector<std::string> expected = {
      "0 drift kernel train fp32 b16 sm=default mem=default pl=default r0",
      "1 grid kernel train fp32 b16 sm=990 mem=default pl=default r0",
      "2 grid kernel train fp32 b16 sm=600 mem=default pl=default r0",
      "3 grid kernel train fp32 b16 sm=1380 mem=default pl=default r0",
      "4 drift kernel train fp32 b16 sm=default mem=default pl=default r4",
      "5 grid kernel train fp32 b16 sm=default mem=default pl=default r0",
      "6 grid kernel train fp32 b64 sm=990 mem=default pl=default r0",
      "7 grid kernel train fp32 b64 sm=default mem=default pl=default r0",
      "8 drift kernel train fp32 b16 sm=default mem=default pl=default r8",
      "9 grid kernel train fp32 b64 sm=1380 mem=default pl=default r0",
      "10 grid kernel train fp32 b64 sm=600 mem=default pl=default r0",
      "11 grid kernel infer fp32 b16 sm=600 mem=default pl=default r0",
      "12 drift kernel train fp32 b16 sm=default mem=default pl=default r12",
      "13 grid kernel infer fp32 b16 sm=990 mem=default pl=default r0",
      "14 grid kernel infer fp32 b16 sm=default mem=default pl=default r0",
      "15 grid kernel infer fp32 b16 sm=1380 mem=default pl=default r0",
      "16 drift kernel train fp32 b16 sm=default mem=default pl=default r16",
      "17 grid kernel infer fp32 b64 sm=600 mem=default pl=default r0",
      "18 grid kernel infer fp32 b64 sm=1380 mem=default pl=default r0",
      "19 grid kernel infer fp32 b64 sm=990 mem=default pl=default r0",
      "20 drift kernel train fp32 b16 sm=default mem=default pl=default r20",
      "21 grid kernel infer fp32 b64 sm=default mem=default pl=default r0",
      "22 drift kernel train fp32 b16 sm=default mem=default pl=default r22",
  };
  EXPECT_EQ(actual, expected) << as_literals(actual);
}

TEST_F(GridStrategyTest, AscendingOrderShardTwoOfThreeWithoutDriftMeasuresTodaysSequence) {
  SweepOptions options;
  options.shard = Shard{1, 3};
  const auto actual = sweep(plan_text("power_limit_w = [150, 200, 250]\nsm_mhz = [900, 1200]",
                                      "order = \"ascending\"\ndrift_check = false"),
                            options);
  const std::vector<std::string> expected = {
      "0 grid kernel train fp32 b16 sm=900 mem=default pl=150 r0",
      "1 grid kernel train fp32 b16 sm=1200 mem=default pl=150 r0",
      "2 grid kernel train fp32 b64 sm=default mem=default pl=default r0",
      "3 grid kernel train fp32 b64 sm=900 mem=default pl=250 r0",
      "4 grid kernel train fp32 b64 sm=1200 mem=default pl=250 r0",
      "5 grid kernel infer fp32 b16 sm=900 mem=default pl=200 r0",
      "6 grid kernel infer fp32 b16 sm=1200 mem=default pl=200 r0",
      "7 grid kernel infer fp32 b64 sm=900 mem=default pl=150 r0",
      "8 grid kernel infer fp32 b64 sm=1200 mem=default pl=150 r0",
  };
  EXPECT_EQ(actual, expected) << as_literals(actual);
}

TEST_F(GridStrategyTest, ConfidenceStopRuleWithoutDefaultShardOneOfTwoMeasuresTodaysSequence) {
  SweepOptions options;
  options.shard = Shard{0, 2};
  const auto actual =
      sweep(plan_text("sm_mhz = { count = 3, min = 600 }",
                      "seed = 42\ninclude_default = false\nrepetitions = 2\nmax_repetitions = 4\n"
                      "ci_target_pct = 0.001\ndrift_every = 2"),
            options);
  // The order of points is the one recorded before the strategy seam; the number of
  // repetitions under this (unreachable) confidence target follows the meter's noise,
  // and since the meter estimates energy between counter updates (docs/measure.md)
  // no two windows give the very same energy, so every grid point takes the maximum.
  const std::vector<std::string> expected = {
      "0 drift kernel train fp32 b16 sm=default mem=default pl=default r0",
      "1 grid kernel train fp32 b16 sm=1380 mem=default pl=default r0",
      "1 grid kernel train fp32 b16 sm=1380 mem=default pl=default r1",
      "1 grid kernel train fp32 b16 sm=1380 mem=default pl=default r2",
      "1 grid kernel train fp32 b16 sm=1380 mem=default pl=default r3",
      "2 grid kernel train fp32 b16 sm=600 mem=default pl=default r0",
      "2 grid kernel train fp32 b16 sm=600 mem=default pl=default r1",
      "2 grid kernel train fp32 b16 sm=600 mem=default pl=default r2",
      "2 grid kernel train fp32 b16 sm=600 mem=default pl=default r3",
      "3 drift kernel train fp32 b16 sm=default mem=default pl=default r3",
      "4 grid kernel train fp32 b64 sm=990 mem=default pl=default r0",
      "4 grid kernel train fp32 b64 sm=990 mem=default pl=default r1",
      "4 grid kernel train fp32 b64 sm=990 mem=default pl=default r2",
      "4 grid kernel train fp32 b64 sm=990 mem=default pl=default r3",
      "5 grid kernel infer fp32 b16 sm=600 mem=default pl=default r0",
      "5 grid kernel infer fp32 b16 sm=600 mem=default pl=default r1",
      "5 grid kernel infer fp32 b16 sm=600 mem=default pl=default r2",
      "5 grid kernel infer fp32 b16 sm=600 mem=default pl=default r3",
      "6 drift kernel train fp32 b16 sm=default mem=default pl=default r6",
      "7 grid kernel infer fp32 b16 sm=1380 mem=default pl=default r0",
      "7 grid kernel infer fp32 b16 sm=1380 mem=default pl=default r1",
      "7 grid kernel infer fp32 b16 sm=1380 mem=default pl=default r2",
      "7 grid kernel infer fp32 b16 sm=1380 mem=default pl=default r3",
      "8 grid kernel infer fp32 b64 sm=990 mem=default pl=default r0",
      "8 grid kernel infer fp32 b64 sm=990 mem=default pl=default r1",
      "8 grid kernel infer fp32 b64 sm=990 mem=default pl=default r2",
      "8 grid kernel infer fp32 b64 sm=990 mem=default pl=default r3",
      "9 drift kernel train fp32 b16 sm=default mem=default pl=default r9",
  };
  EXPECT_EQ(actual, expected) << as_literals(actual);
}

TEST_F(GridStrategyTest, ResumeAfterAFailureMeasuresTodaysRemainingSequence) {
  const std::string text =
      plan_text("sm_mhz = { count = 3, min = 600 }", "seed = 3\nrepetitions = 2\ndrift_every = 4");
  int calls_left = 30;
  sweep(text, {}, &calls_left);
  SweepOptions options;
  options.resume = true;
  const auto actual = sweep(text, options);
  const std::vector<std::string> expected = {
      "0 drift kernel train fp32 b16 sm=default mem=default pl=default r0",
      "0 drift kernel train fp32 b16 sm=default mem=default pl=default r0",
      "1 grid kernel train fp32 b16 sm=990 mem=default pl=default r0",
      "1 grid kernel train fp32 b16 sm=990 mem=default pl=default r1",
      "2 grid kernel train fp32 b16 sm=1380 mem=default pl=default r0",
      "2 grid kernel train fp32 b16 sm=1380 mem=default pl=default r1",
      "3 grid kernel train fp32 b16 sm=600 mem=default pl=default r0",
      "3 grid kernel train fp32 b16 sm=600 mem=default pl=default r1",
      "4 grid kernel train fp32 b16 sm=default mem=default pl=default r0",
      "4 grid kernel train fp32 b16 sm=default mem=default pl=default r1",
      "5 drift kernel train fp32 b16 sm=default mem=default pl=default r5",
      "5 drift kernel train fp32 b16 sm=default mem=default pl=default r5",
      "6 grid kernel train fp32 b64 sm=1380 mem=default pl=default r0",
      "6 grid kernel train fp32 b64 sm=1380 mem=default pl=default r1",
      "7 grid kernel train fp32 b64 sm=default mem=default pl=default r0",
      "7 grid kernel train fp32 b64 sm=default mem=default pl=default r1",
      "8 grid kernel train fp32 b64 sm=990 mem=default pl=default r0",
      "8 grid kernel train fp32 b64 sm=990 mem=default pl=default r1",
      "9 grid kernel train fp32 b64 sm=600 mem=default pl=default r0",
      "9 grid kernel train fp32 b64 sm=600 mem=default pl=default r1",
      "10 drift kernel train fp32 b16 sm=default mem=default pl=default r10",
      "11 grid kernel infer fp32 b16 sm=1380 mem=default pl=default r0",
      "11 grid kernel infer fp32 b16 sm=1380 mem=default pl=default r1",
      "12 grid kernel infer fp32 b16 sm=600 mem=default pl=default r0",
      "12 grid kernel infer fp32 b16 sm=600 mem=default pl=default r1",
      "13 grid kernel infer fp32 b16 sm=990 mem=default pl=default r0",
      "13 grid kernel infer fp32 b16 sm=990 mem=default pl=default r1",
      "14 grid kernel infer fp32 b16 sm=default mem=default pl=default r0",
      "14 grid kernel infer fp32 b16 sm=default mem=default pl=default r1",
      "15 drift kernel train fp32 b16 sm=default mem=default pl=default r15",
      "16 grid kernel infer fp32 b64 sm=default mem=default pl=default r0",
      "16 grid kernel infer fp32 b64 sm=default mem=default pl=default r1",
      "17 grid kernel infer fp32 b64 sm=600 mem=default pl=default r0",
      "17 grid kernel infer fp32 b64 sm=600 mem=default pl=default r1",
      "18 grid kernel infer fp32 b64 sm=1380 mem=default pl=default r0",
      "18 grid kernel infer fp32 b64 sm=1380 mem=default pl=default r1",
      "19 grid kernel infer fp32 b64 sm=990 mem=default pl=default r0",
      "19 grid kernel infer fp32 b64 sm=990 mem=default pl=default r1",
      "20 drift kernel train fp32 b16 sm=default mem=default pl=default r20",
  };
  EXPECT_EQ(actual, expected) << as_literals(actual);
}

}  // namespace
}  // namespace dvfslab
