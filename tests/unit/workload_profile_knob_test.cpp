// The workload-power-profile knob on the simulated H200 (whose spec offers the
// fake NVML's profile table): the guard makes a setting's profile the GPU's whole
// request and puts the request found back; the saved state is checked like the
// clock knobs' when it is read back from a journal.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/workload_power_profiles.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

constexpr int max_q = 1, compute = 2, memory_bound = 3, llm_inference = 6;

Setting profile(int id) {
  Setting setting;
  setting.workload_profile = id;
  return setting;
}

class WorkloadProfileKnob : public ::testing::Test {
 protected:
  void SetUp() override { gpu.load_requested_workload_power_profiles({memory_bound, llm_inference}); }
  std::vector<int> requested() { return workload_power_profiles(gpu)->requested; }

  testing::ScratchDir dir;
  SimGpu gpu{sim_gpu_spec("h200"), SimTimeMode::virtual_time};
  GuardOptions options{dir.path(), true};
};

TEST_F(WorkloadProfileKnob, ASettingsProfileBecomesTheWholeRequestAndTheFoundRequestComesBack) {
  ClockGuard guard(gpu, options);
  guard.apply(profile(max_q));
  EXPECT_EQ(requested(), std::vector<int>{max_q});
  guard.apply(profile(compute));
  EXPECT_EQ(requested(), std::vector<int>{compute});
  guard.apply(Setting{});
  EXPECT_EQ(requested(), (std::vector<int>{memory_bound, llm_inference}));
  guard.apply(profile(memory_bound));
  EXPECT_EQ(requested(), std::vector<int>{memory_bound});
  guard.restore();
  EXPECT_EQ(requested(), (std::vector<int>{memory_bound, llm_inference}));
}

TEST_F(WorkloadProfileKnob, AProfileChangesWhatTheSimulatedGpuMayDraw) {
  ClockGuard guard(gpu, options);
  const double uncapped = *gpu.power_limits().current_w;
  guard.apply(profile(max_q));
  EXPECT_EQ(workload_power_profiles(gpu)->enforced, std::vector<int>{max_q});
  guard.restore();
  EXPECT_DOUBLE_EQ(*gpu.power_limits().current_w, uncapped);
}

TEST_F(WorkloadProfileKnob, ClocksAndAProfileAreSavedTogetherAndRestoredTogether) {
  const ControlState found = gpu.control_state();
  ClockGuard guard(gpu, options);
  Setting both = profile(max_q);
  both.power_limit_w = 500;
  guard.apply(both);
  EXPECT_NE(gpu.control_state(), found);
  EXPECT_EQ(requested(), std::vector<int>{max_q});
  guard.restore();
  EXPECT_EQ(gpu.control_state(), found);
  EXPECT_EQ(requested(), (std::vector<int>{memory_bound, llm_inference}));
}

TEST_F(WorkloadProfileKnob, AProfileTheGpuDoesNotOfferIsRefusedWithTheOnesItDoes) {
  ClockGuard guard(gpu, options);
  try {
    guard.apply(profile(13));  // hpc: not in the simulated H200's table
    FAIL() << "an unsupported profile was applied";
  } catch (const NotSupportedError& error) {
    EXPECT_NE(std::string(error.what()).find("does not support the workload power profile hpc; it supports "
                                             "max-p, max-q, compute, memory-bound, llm-inference, llm-training"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(requested(), (std::vector<int>{memory_bound, llm_inference}));
}

TEST_F(WorkloadProfileKnob, AGpuWithoutProfilesRefusesAProfileSettingInOneLine) {
  SimGpu v100{sim_gpu_spec("v100"), SimTimeMode::virtual_time};
  ClockGuard guard(v100, options);
  EXPECT_THROW(guard.apply(profile(max_q)), NotSupportedError);
  EXPECT_FALSE(guard.has_changes()) << "refused before anything was journaled";
  EXPECT_EQ(v100.control()->knobs(),
            (std::vector<std::string>{"sm_lock", "memory_lock", "application_clocks", "power_limit"}));
}

TEST_F(WorkloadProfileKnob, TheControlListsTheProfileKnobLastAndSavesTheRequest) {
  const auto control = gpu.control();
  EXPECT_EQ(control->knobs(), (std::vector<std::string>{"sm_lock", "memory_lock", "application_clocks",
                                                        "power_limit", "workload_profile"}));
  const nlohmann::json saved = control->save();
  EXPECT_EQ(saved.at("requested_workload_profiles"), nlohmann::json({memory_bound, llm_inference}));
  EXPECT_TRUE(saved.contains("power_limit_w")) << saved.dump();
  EXPECT_TRUE(control->as_found("workload_profile", saved));
  gpu.load_requested_workload_power_profiles({max_q});
  EXPECT_FALSE(control->as_found("workload_profile", saved));
  const ControlStep step = control->restore_step("workload_profile", saved);
  EXPECT_EQ(step.description, "requested workload power profiles set back to memory-bound, llm-inference");
  step.call();
  EXPECT_EQ(requested(), (std::vector<int>{memory_bound, llm_inference}));
}

TEST_F(WorkloadProfileKnob, AJournalsProfileStateIsCheckedBeforeItIsTrusted) {
  const auto control = gpu.control();
  nlohmann::json saved = control->save();
  const std::vector<std::string> touched{"workload_profile"};
  EXPECT_NO_THROW(control->check_saved(saved, touched));
  EXPECT_EQ(control->implausible(saved, touched), std::nullopt);

  // A journal of an earlier release records no profiles: fine while the knob was not touched.
  nlohmann::json earlier = saved;
  earlier.erase("requested_workload_profiles");
  EXPECT_NO_THROW(control->check_saved(earlier, {"power_limit"}));
  EXPECT_THROW(control->check_saved(earlier, touched), std::invalid_argument);

  for (const nlohmann::json& wrong : {nlohmann::json("max-q"), nlohmann::json({1, 1}), nlohmann::json({-1}),
                                      nlohmann::json({255}), nlohmann::json({1.5})}) {
    nlohmann::json tampered = saved;
    tampered["requested_workload_profiles"] = wrong;
    EXPECT_THROW(control->check_saved(tampered, touched), std::invalid_argument) << wrong.dump();
  }
  EXPECT_THROW(control->check_saved(saved, {"workload_profiles"}), std::invalid_argument);

  nlohmann::json unsupported = saved;
  unsupported["requested_workload_profiles"] = {13};
  EXPECT_EQ(control->implausible(unsupported, touched),
            "requested workload power profiles the GPU does not support (hpc)");
}

TEST(SettingWithAProfile, IsNotTheDefaultAndNamesItsProfile) {
  EXPECT_FALSE(profile(max_q).is_default());
  EXPECT_EQ(to_string(profile(max_q)), "sm=default mem=default pl=default profile=max-q");
  EXPECT_EQ(to_string(Setting{1380, std::nullopt, std::nullopt}), "sm=1380 mem=default pl=default");
  // Without a profile first, then by profile: the baseline's place in setting order is kept.
  EXPECT_TRUE(setting_order_before(Setting{}, profile(max_q)));
  EXPECT_TRUE(setting_order_before(profile(max_q), profile(compute)));
  EXPECT_FALSE(setting_order_before(profile(compute), profile(max_q)));
}

}  // namespace
}  // namespace dvfslab
