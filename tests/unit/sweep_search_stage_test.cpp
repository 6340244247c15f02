// One stage of a per-GPU search (run_search_stage) on a simulated node of two H200s:
// the strategy's settings go on the varied GPU while the other holds its setting, the
// run is recorded under the varied GPU with a comment naming the stage, and both GPUs
// are back as found when it ends.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "dvfslab/clock.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/job_stage.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/sim_workloads.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/strategy.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

const char* const plan_text = R"(
[knobs]
sm_mhz = [1005, 1500]
[[cases]]
workloads = ["resnet50"]
batch_sizes = [32]
[measure]
warmup_iterations = 1
duration_s = 1.0
repetitions = 1
max_repetitions = 1
settle_s = 0
drift_check = false
)";

// Each point's controls on both GPUs, read while the point's setting is on.
class ControlsRecorder final : public ProgressReporter {
 public:
  explicit ControlsRecorder(std::vector<Gpu*> gpus) : gpus_(std::move(gpus)) {}
  void start(const Schedule&, const GpuIdentity&, std::size_t) override {}
  void point_done(const PointOutcome& outcome, std::size_t, std::size_t) override {
    settings.push_back(outcome.point.setting);
    first.push_back(gpus_[0]->control_state().locked_sm_min_mhz);
    second.push_back(gpus_[1]->control_state().locked_sm_min_mhz);
  }
  void finish() override {}
  std::vector<Setting> settings;
  std::vector<std::optional<int>> first, second;

 private:
  std::vector<Gpu*> gpus_;
};

// Two simulated H200s of one node on one virtual clock, and the stage's plan.
class SearchStage : public ::testing::Test {
 protected:
  SearchStage() { add_sim_workloads(registry); }

  testing::ScratchDir scratch;
  WorkloadRegistry registry;
  const Plan plan = parse_plan_text(plan_text, "stage.toml");
  const std::shared_ptr<VirtualClock> clock = std::make_shared<VirtualClock>();
  SimGpu gpu0{sim_gpu_spec("h200"), clock, 0};
  SimGpu gpu1{sim_gpu_spec("h200"), clock, 1};
  std::vector<Gpu*> job = {&gpu0, &gpu1};
};

TEST_F(SearchStage, VariesOneGpuWhileTheOtherHoldsItsSettingAndRecordsTheStage) {
  const ControlState found0 = gpu0.control_state();
  const ControlState found1 = gpu1.control_state();

  ClockGuardSet guard(job, GuardOptions{scratch / "state", true});
  Setting held;
  held.sm_mhz = 1005;
  const JobStage stage{guard, 1, {held, Setting{}}, 2, 2};
  Store store(scratch / "stage.sqlite");
  ControlsRecorder recorder(job);
  const auto strategy = make_strategy("grid", {});
  const SweepResult result =
      run_search_stage(job, plan, registry, store, SweepOptions{}, recorder, *strategy, stage);

  ASSERT_EQ(recorder.settings.size(), 3u) << "the default and the plan's two clocks";
  for (std::size_t i = 0; i < recorder.settings.size(); ++i) {
    EXPECT_EQ(recorder.first[i], 1005) << "GPU 0 holds its setting at " << to_string(recorder.settings[i]);
    EXPECT_EQ(recorder.second[i], recorder.settings[i].sm_mhz) << "GPU 1 takes the strategy's setting";
  }
  const auto run = store.run(result.run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->gpu.uuid, gpu1.identity().uuid);
  EXPECT_NE(run->plan_text.find("# dvfslab: per-GPU search stage 2 of 2: varies " + gpu1.identity().uuid +
                                "; the others held " + gpu0.identity().uuid + " sm=1005"),
            std::string::npos)
      << run->plan_text;
  EXPECT_EQ(gpu0.control_state(), found0);
  EXPECT_EQ(gpu1.control_state(), found1);
}

TEST_F(SearchStage, RefusesAResumeAndAHeldListOfAnotherSize) {
  ClockGuardSet guard(job, GuardOptions{scratch / "state", true});
  Store store(scratch / "stage.sqlite");
  auto silent = make_silent_progress_reporter();
  const auto strategy = make_strategy("grid", {});
  SweepOptions resume;
  resume.resume = true;
  EXPECT_THROW(run_search_stage(job, plan, registry, store, resume, *silent, *strategy,
                                JobStage{guard, 0, {Setting{}, Setting{}}, 1, 2}),
               UsageError);
  EXPECT_THROW(run_search_stage(job, plan, registry, store, SweepOptions{}, *silent, *strategy,
                                JobStage{guard, 0, {Setting{}}, 1, 2}),
               UsageError);
}

}  // namespace
}  // namespace dvfslab
