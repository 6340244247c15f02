// The parts of the simulator's physics that issue 14's calibration added: time
// growing faster than 1/fc at low clocks, power following the work rate of a unit
// that waits on the other clock, and the power limit's headroom.
#include <gtest/gtest.h>

#include <algorithm>

#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/types.hpp"
#include "gpu/sim/physics.hpp"

namespace dvfslab {
namespace {

SimKernel compute_bound() { return SimKernel{0.0, 0.010, 1.0, 0.8, 0.5}; }
SimKernel memory_bound() { return SimKernel{0.0, 0.010, 0.2, 0.8, 1.0}; }
SimKernel heavy() { return SimKernel{0.0, 0.010, 0.8, 1.0, 1.0}; }

TEST(SimPhysicsCalibrated, SlowdownIsSuperlinearBelowTheSlowClock) {
  const SimGpuSpec& spec = sim_gpu_spec("v100");
  const auto relative_time = [&](int mhz) {
    return sim::kernel_seconds(spec, compute_bound(), mhz, 877) /
           sim::kernel_seconds(spec, compute_bound(), 1380, 877);
  };
  // At and above slow_clock_below_mhz compute-bound time is exactly 1/fc.
  EXPECT_DOUBLE_EQ(relative_time(1087), 1380.0 / 1087);
  EXPECT_DOUBLE_EQ(relative_time(1005), 1380.0 / 1005);
  // Below it more: the real V100 kernels' median is 4.95× at 405 MHz where 1/fc is 3.4×.
  EXPECT_GT(relative_time(802), 1380.0 / 802);
  EXPECT_GT(relative_time(405), 1.5 * 1380.0 / 405);
  EXPECT_GT(relative_time(405) / (1380.0 / 405), relative_time(600) / (1380.0 / 600));
}

TEST(SimPhysicsCalibrated, PowerAtTheLowestClocksFallsWithTheWorkRate) {
  const SimGpuSpec& spec = sim_gpu_spec("v100");
  const double top = sim::busy_power_w(spec, heavy(), 1380, 877);
  const double lowest = sim::busy_power_w(spec, heavy(), 405, 877);
  // Real V100 kernels: a median 0.29 of the top clock's power at 405 MHz.
  EXPECT_LT(lowest / top, 0.34);
  EXPECT_GT(lowest, spec.static_power_w);
}

TEST(SimPhysicsCalibrated, WorkWaitingOnMemoryDrawsLessCorePower) {
  const SimGpuSpec& spec = sim_gpu_spec("rtx2080ti");
  // A compute-bound kernel's time does not depend on the memory clock, so only the
  // memory's per-cycle power changes with it.
  const double compute_drop = sim::busy_power_w(spec, compute_bound(), 1500, 7000) -
                              sim::busy_power_w(spec, compute_bound(), 1500, 5000);
  EXPECT_NEAR(
      compute_drop,
      spec.memory_power_w_per_mhz * compute_bound().memory_activity * spec.per_cycle_power_share * 2000,
      1e-9);
  // A memory-bound one slows down, so its SM and memory do less per second.
  const SimKernel waiting = memory_bound();
  const double memory_drop =
      sim::busy_power_w(spec, waiting, 1500, 7000) - sim::busy_power_w(spec, waiting, 1500, 5000);
  EXPECT_GT(memory_drop, spec.memory_power_w_per_mhz * waiting.memory_activity * 2000 * 0.5);
}

TEST(SimPhysicsCalibrated, PowerLimitKeepsItsHeadroom) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  gpu.set_power_limit(150);
  gpu.set_background_load(heavy());
  const int capped = gpu.effective_sm_mhz();
  const double target = 150 * (1 - gpu.spec().power_limit_headroom);
  EXPECT_LT(target, 150);
  EXPECT_LE(sim::busy_power_w(gpu.spec(), heavy(), capped, 877), target);
  // It is the highest clock under the target, not under the limit itself.
  const auto& clocks = gpu.spec().graphics_mhz.front();
  const int next_up = *(std::find(clocks.begin(), clocks.end(), capped) - 1);
  EXPECT_GT(sim::busy_power_w(gpu.spec(), heavy(), next_up, 877), target);
  EXPECT_TRUE(*gpu.read_telemetry().throttle_reasons & throttle::sw_power_cap);
}

}  // namespace
}  // namespace dvfslab
