// Workload power profiles on a simulated GPU: the H200's assumed table, requests,
// arbitration, the power cap an enforced profile imposes, and models without
// profiles. The effect is an assumption (docs/simulation.md#workload-power-profiles);
// these tests pin what the simulator does, not what a real GPU does.
#include <gtest/gtest.h>

#include "dvfslab/error.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/workload_power_profiles.hpp"

namespace dvfslab {
namespace {

// A compute-heavy kernel that draws the H200 up to its 700 W limit at default settings.
constexpr SimKernel heavy_kernel{0.0, 0.05, 0.9, 3.0, 1.0};

double mean_power_w(SimGpu& gpu, const SimKernel& kernel = heavy_kernel) {
  const double energy_before_j = gpu.true_energy_j();
  const double seconds = gpu.run(kernel, 100);
  return (gpu.true_energy_j() - energy_before_j) / seconds;
}

TEST(SimWorkloadProfiles, TheH200OffersTheAssumedTableWithNoneRequested) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  const auto profiles = workload_power_profiles(gpu);
  ASSERT_TRUE(profiles.has_value());
  std::vector<std::string> names;
  for (const WorkloadPowerProfile& profile : profiles->supported) names.push_back(profile.name);
  EXPECT_EQ(names, (std::vector<std::string>{"max-p", "max-q", "compute", "memory-bound", "llm-inference",
                                             "llm-training"}));
  EXPECT_TRUE(profiles->requested.empty());
  EXPECT_TRUE(profiles->enforced.empty());
}

TEST(SimWorkloadProfiles, ConflictingRequestsEnforceTheHigherPriorityOne) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  request_workload_power_profiles(gpu, {1, 3});
  request_workload_power_profiles(gpu, {0, 2});
  auto profiles = workload_power_profiles(gpu);
  EXPECT_EQ(profiles->requested, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(profiles->enforced, (std::vector<int>{0, 2})) << "max-p beats max-q, compute beats memory-bound";
  clear_workload_power_profiles(gpu, {0, 2});
  profiles = workload_power_profiles(gpu);
  EXPECT_EQ(profiles->requested, (std::vector<int>{1, 3}));
  EXPECT_EQ(profiles->enforced, (std::vector<int>{1, 3}));
}

TEST(SimWorkloadProfiles, AnEnforcedProfileCapsPowerAndClearingItLiftsTheCap) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  const double default_w = mean_power_w(gpu);
  EXPECT_GT(default_w, 600.0) << "the kernel must be heavy enough for a cap to bite";
  request_workload_power_profiles(gpu, {1});  // max-q: 60 % of 700 W
  const double max_q_w = mean_power_w(gpu);
  EXPECT_LE(max_q_w, 420.0);
  EXPECT_LT(gpu.effective_sm_mhz(), 1980);
  EXPECT_EQ(gpu.control_state().power_limit_w, 700.0) << "the profile is not the power limit";
  clear_workload_power_profiles(gpu, {1});
  EXPECT_NEAR(mean_power_w(gpu), default_w, 1.0);
}

TEST(SimWorkloadProfiles, WithoutAnEnforcedCapALimitAboveTheDefaultStaysInForce) {
  SimGpuSpec spec = sim_gpu_spec("h200");
  spec.power_limit_max_w = 800;  // a board whose limit may be raised above its default
  SimGpu gpu(spec, SimTimeMode::virtual_time);
  request_workload_power_profiles(gpu, {7});  // llm-training caps nothing
  gpu.set_power_limit(800);
  constexpr SimKernel heavier_kernel{0.0, 0.05, 0.9, 12.0, 3.0};  // would draw more than 800 W uncapped
  EXPECT_GT(mean_power_w(gpu, heavier_kernel), 700.0);
}

TEST(SimWorkloadProfiles, AProfileTheGpuDoesNotOfferIsRefusedAndTheRequestKept) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  request_workload_power_profiles(gpu, {6});
  EXPECT_THROW(request_workload_power_profiles(gpu, {13}), ConfigError);  // hpc
  EXPECT_EQ(workload_power_profiles(gpu)->requested, (std::vector<int>{6}));
}

TEST(SimWorkloadProfiles, ModelsWithoutProfilesSayNotSupported) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  EXPECT_EQ(workload_power_profiles(gpu), std::nullopt);
  EXPECT_THROW(request_workload_power_profiles(gpu, {1}), NotSupportedError);
}

TEST(SimWorkloadProfiles, ReadOnlyModeRefusesRequests) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  gpu.set_read_only(true);
  EXPECT_THROW(request_workload_power_profiles(gpu, {1}), PermissionError);
  EXPECT_TRUE(workload_power_profiles(gpu)->requested.empty());
}

TEST(SimWorkloadProfiles, ALoadedRequestIsInForceAtOnce) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  gpu.load_requested_workload_power_profiles({1});
  EXPECT_EQ(workload_power_profiles(gpu)->enforced, (std::vector<int>{1}));
  EXPECT_LE(mean_power_w(gpu), 420.0);
}

}  // namespace
}  // namespace dvfslab
