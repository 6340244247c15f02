// A simulated GPU on the wall clock: work takes real (short) time and another
// thread may read telemetry or change the load meanwhile. No timing assertions:
// only what the model fixes exactly.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "dvfslab/sim_gpu.hpp"
#include "gpu/sim/physics.hpp"

namespace dvfslab {
namespace {

TEST(SimWallTime, RunTakesTheModelledTimeOnTheWallClock) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::wall_time);
  EXPECT_FALSE(gpu.clock().is_virtual());
  const SimKernel kernel{0.0, 0.004, 0.8, 0.8, 0.8};
  const double before = gpu.clock().now_s();
  const double took = gpu.run(kernel, 5);
  EXPECT_NEAR(took, 5 * sim::kernel_seconds(gpu.spec(), kernel, 1380, 877), 1e-9);
  EXPECT_GE(gpu.clock().now_s() - before, took);
  EXPECT_GT(gpu.true_energy_j(), 0.0);
}

TEST(SimWallTime, AnotherThreadReadsTelemetryWhileWorkRuns) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::wall_time);
  std::atomic<bool> done{false};
  std::atomic<int> readings{0};
  std::atomic<bool> energy_went_back{false};
  std::thread reader([&] {
    double last = 0;
    while (!done) {
      const double energy = *gpu.read_telemetry().energy_j;
      if (energy < last) energy_went_back = true;
      last = energy;
      ++readings;
      std::this_thread::yield();
    }
  });
  gpu.run(SimKernel{0.0, 0.005, 0.7, 0.7, 0.7}, 6);
  done = true;
  reader.join();
  EXPECT_GT(readings.load(), 0);
  EXPECT_FALSE(energy_went_back.load());
}

TEST(SimWallTime, ClockChangedFromAnotherThreadMidRun) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::wall_time);
  const SimKernel kernel{0.0, 0.002, 1.0, 0.8, 0.5};
  gpu.lock_sm_clocks(1380, 1380);
  std::thread tuner([&] { gpu.lock_sm_clocks(1035, 1035); });
  const double took = gpu.run(kernel, 10);
  tuner.join();
  // Whenever the change landed, the work took between all-fast and all-slow time.
  EXPECT_GE(took, 10 * 0.002 - 1e-9);
  EXPECT_LE(took, 10 * 0.002 * 1380.0 / 1035.0 + 1e-9);
  EXPECT_EQ(gpu.control_state().locked_sm_max_mhz, 1035);
}

TEST(SimWallTime, BackgroundLoadSetFromAnotherThread) {
  SimGpu gpu(sim_gpu_spec("a100"), SimTimeMode::wall_time);
  std::thread setter([&] { gpu.set_background_load(SimKernel{0.0, 0.01, 0.9, 0.9, 0.9}); });
  setter.join();
  EXPECT_EQ(gpu.effective_sm_mhz(), 1410);
  gpu.set_background_load(std::nullopt);
  // Idle at once; its clocks drop after idle_clocks_after_s of wall time, which
  // SimPhysics tests on virtual time.
  EXPECT_EQ(*gpu.read_telemetry().throttle_reasons, throttle::gpu_idle);
}

}  // namespace
}  // namespace dvfslab
