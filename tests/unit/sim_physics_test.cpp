// The simulator's physics on virtual time: time and power models, power capping,
// the sensor's refresh period, the averaged power's lag and exact energy.
#include <gtest/gtest.h>

#include <cmath>

#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/types.hpp"
#include "gpu/sim/physics.hpp"

namespace dvfslab {
namespace {

SimKernel compute_bound() { return SimKernel{0.0, 0.010, 1.0, 0.8, 0.5}; }
SimKernel heavy() { return SimKernel{0.0, 0.010, 0.8, 1.0, 1.0}; }

VirtualClock& virtual_clock(SimGpu& gpu) { return dynamic_cast<VirtualClock&>(gpu.clock()); }

TEST(SimPhysics, VoltageIsFlatBelowTheKneeThenRises) {
  const SimGpuSpec& spec = sim_gpu_spec("v100");
  EXPECT_DOUBLE_EQ(sim::core_voltage_v(spec, 135), spec.voltage_min_v);
  EXPECT_DOUBLE_EQ(sim::core_voltage_v(spec, static_cast<int>(spec.voltage_knee_mhz)), spec.voltage_min_v);
  EXPECT_DOUBLE_EQ(sim::core_voltage_v(spec, 1380), spec.voltage_max_v);
  EXPECT_GT(sim::core_voltage_v(spec, 1140), sim::core_voltage_v(spec, 1020));
}

TEST(SimPhysics, TimeFollowsTheModel) {
  const SimGpuSpec& spec = sim_gpu_spec("v100");
  const SimKernel kernel{0.002, 0.010, 0.6, 1.0, 1.0};
  EXPECT_DOUBLE_EQ(sim::kernel_seconds(spec, kernel, 1380, 877), 0.012);
  // 1035 MHz is above the V100's slow_clock_below_mhz: plain 1/fc scaling there.
  const double at_1035 = 0.002 + 0.010 * (0.6 * 1380.0 / 1035.0 + 0.4);
  EXPECT_DOUBLE_EQ(sim::kernel_seconds(spec, kernel, 1035, 877), at_1035);
  SimGpu gpu(spec, SimTimeMode::virtual_time);
  gpu.lock_sm_clocks(1035, 1035);
  const double took = gpu.run(kernel, 100);
  EXPECT_NEAR(took, 100 * at_1035, 1e-9);
  EXPECT_NEAR(gpu.clock().now_s(), took, 1e-9);
}

TEST(SimPhysics, AKernelsOwnStretchReplacesTheGpus) {
  const SimGpuSpec& spec = sim_gpu_spec("v100");
  SimKernel kernel{0.0, 0.010, 1.0, 1.0, 1.0};
  // 405 MHz, below slow_clock_below_mhz (1000): S = 1 + g·(1000/405 − 1)^1.5.
  const double stretch_base = std::pow(1000.0 / 405.0 - 1.0, 1.5);
  const double plain = 0.010 * 1380.0 / 405.0;
  EXPECT_DOUBLE_EQ(sim::kernel_seconds(spec, kernel, 405, 877),
                   plain * (1.0 + spec.slow_clock_gain * stretch_base));
  kernel.slow_clock_gain = 0.0;
  EXPECT_DOUBLE_EQ(sim::kernel_seconds(spec, kernel, 405, 877), plain);
  kernel.slow_clock_gain = 2.0;
  EXPECT_DOUBLE_EQ(sim::kernel_seconds(spec, kernel, 405, 877), plain * (1.0 + 2.0 * stretch_base));
  // Above the slow clock no kernel stretches.
  EXPECT_DOUBLE_EQ(sim::kernel_seconds(spec, kernel, 1035, 877), 0.010 * 1380.0 / 1035.0);
}

TEST(SimPhysics, PowerRisesWithEveryClockStep) {
  for (const auto& key : sim_gpu_keys()) {
    const SimGpuSpec& spec = sim_gpu_spec(key);
    for (std::size_t m = 0; m < spec.memory_mhz.size(); ++m) {
      const auto& clocks = spec.graphics_mhz[m];
      for (std::size_t i = 1; i < clocks.size(); ++i) {
        EXPECT_GT(sim::busy_power_w(spec, heavy(), clocks[i - 1], spec.memory_mhz[m]),
                  sim::busy_power_w(spec, heavy(), clocks[i], spec.memory_mhz[m]))
            << key << " at " << clocks[i];
      }
    }
  }
}

TEST(SimPhysics, PowerCapLowersTheClockAndSaysSo) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  gpu.set_background_load(heavy());
  gpu.clock().sleep_for(0.5);
  const int capped_at_700 = gpu.effective_sm_mhz();
  EXPECT_LT(capped_at_700, 1980);
  Telemetry t = gpu.read_telemetry();
  ASSERT_TRUE(t.throttle_reasons);
  EXPECT_TRUE(*t.throttle_reasons & throttle::sw_power_cap);
  const double headroom = 1.0 - gpu.spec().power_limit_headroom;
  EXPECT_LE(*t.power_instant_w, 700.0 * headroom);
  // The highest clock that fits under the limit less its headroom: one step up would not.
  EXPECT_GT(sim::busy_power_w(gpu.spec(), heavy(), capped_at_700 + 15, 3201), 700.0 * headroom);

  gpu.set_power_limit(400);
  gpu.clock().sleep_for(0.5);
  EXPECT_LT(gpu.effective_sm_mhz(), capped_at_700);
  EXPECT_LE(*gpu.read_telemetry().power_instant_w, 400.0);

  gpu.reset_power_limit();
  gpu.lock_sm_clocks(1005, 1005);
  gpu.clock().sleep_for(0.5);
  EXPECT_EQ(gpu.effective_sm_mhz(), 1005);
  t = gpu.read_telemetry();
  EXPECT_FALSE(*t.throttle_reasons & throttle::sw_power_cap);
  EXPECT_TRUE(*t.throttle_reasons & throttle::applications_clocks_setting);
}

TEST(SimPhysics, LowerMemoryClockSlowsMemoryBoundWorkAndSavesMemoryPower) {
  SimGpu gpu(sim_gpu_spec("rtx2080ti"), SimTimeMode::virtual_time);
  const SimKernel memory_bound{0.0, 0.010, 0.3, 0.6, 1.0};
  gpu.lock_sm_clocks(1800, 1800);
  const double fast = gpu.run(memory_bound, 10);
  const double fast_power = sim::busy_power_w(gpu.spec(), memory_bound, 1800, 7000);
  gpu.set_application_clocks(5000, 1800);
  const double slow = gpu.run(memory_bound, 10);
  const double core_part = 0.3 * 2115.0 / 1800.0;
  EXPECT_NEAR(slow / fast, (core_part + 0.7 * 7000.0 / 5000.0) / (core_part + 0.7), 1e-9);
  EXPECT_LT(sim::busy_power_w(gpu.spec(), memory_bound, 1800, 5000), fast_power);
  gpu.set_background_load(memory_bound);
  EXPECT_EQ(gpu.read_telemetry().mem_mhz, 5000);
}

TEST(SimPhysics, PowerCapWinsOverALockedRange) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  gpu.lock_sm_clocks(1300, 1380);
  gpu.set_power_limit(100);
  gpu.set_background_load(heavy());
  const int capped = gpu.effective_sm_mhz();
  EXPECT_LT(capped, 1300);
  EXPECT_LE(sim::busy_power_w(gpu.spec(), heavy(), capped, 877), 100.0);
  EXPECT_TRUE(*gpu.read_telemetry().throttle_reasons & throttle::sw_power_cap);
}

TEST(SimPhysics, IdleGpuRunsLowClocksAtIdlePower) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  gpu.clock().sleep_for(2.0);
  const Telemetry t = gpu.read_telemetry();
  EXPECT_EQ(t.sm_mhz, 345);
  EXPECT_EQ(t.mem_mhz, 3201);
  EXPECT_DOUBLE_EQ(*t.power_instant_w, gpu.spec().idle_power_w);
  EXPECT_EQ(*t.throttle_reasons, throttle::gpu_idle);
  EXPECT_EQ(t.gpu_utilization_pct, 0);
}

TEST(SimPhysics, GeForceIdleDropsTheMemoryClock) {
  SimGpu gpu(sim_gpu_spec("rtx2080ti"), SimTimeMode::virtual_time);
  Telemetry t = gpu.read_telemetry();
  EXPECT_EQ(t.sm_mhz, 300);
  EXPECT_EQ(t.mem_mhz, 405);
  EXPECT_FALSE(t.memory_temperature_c);
  gpu.set_background_load(compute_bound());
  t = gpu.read_telemetry();
  EXPECT_EQ(t.sm_mhz, 2115);
  EXPECT_EQ(t.mem_mhz, 7000);
}

// Between two pieces of work a GPU keeps its clocks (windows that sampled such a
// gap read a GeForce board's idle memory clock, or a P100's lowest SM clock under
// application clocks, and were flagged as not applied); it drops them once idle for
// idle_clocks_after_s.
TEST(SimPhysics, IdleClocksComeOnlyOnceTheGpuStaysIdle) {
  SimGpu geforce(sim_gpu_spec("rtx2080ti"), SimTimeMode::virtual_time);
  geforce.run(compute_bound(), 10);
  EXPECT_EQ(geforce.read_telemetry().mem_mhz, 7000);
  const double hold_s = geforce.spec().idle_clocks_after_s;
  ASSERT_GT(hold_s, 0);
  geforce.clock().sleep_for(0.9 * hold_s);
  EXPECT_EQ(geforce.read_telemetry().mem_mhz, 7000);
  EXPECT_EQ(*geforce.read_telemetry().throttle_reasons, throttle::gpu_idle);
  geforce.clock().sleep_for(0.2 * hold_s);
  EXPECT_EQ(geforce.read_telemetry().mem_mhz, 405);
  geforce.run(compute_bound(), 1);
  EXPECT_EQ(geforce.read_telemetry().mem_mhz, 7000);

  SimGpu pascal(sim_gpu_spec("p100"), SimTimeMode::virtual_time);
  pascal.set_application_clocks(715, 1316);
  pascal.run(compute_bound(), 10);
  EXPECT_EQ(pascal.read_telemetry().sm_mhz, 1316);
  pascal.clock().sleep_for(1.1 * hold_s);
  EXPECT_EQ(pascal.read_telemetry().sm_mhz, pascal.spec().graphics_mhz_for(715).back());
}

TEST(SimPhysics, SensorRefreshesOncePerPeriod) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  auto& clock = virtual_clock(gpu);
  clock.advance_to(0.25);
  gpu.set_background_load(compute_bound());
  clock.advance_to(0.28);
  const Telemetry before = gpu.read_telemetry();
  EXPECT_DOUBLE_EQ(*before.power_instant_w, gpu.spec().idle_power_w);  // last refresh at 0.2 s
  EXPECT_EQ(before.sm_mhz, 1380);                                      // clocks are read live
  clock.advance_to(0.35);
  const double energy_at_refresh =
      gpu.true_energy_j() - (0.35 - 0.3) * sim::busy_power_w(gpu.spec(), compute_bound(), 1380, 877);
  const Telemetry after = gpu.read_telemetry();
  EXPECT_NEAR(*after.energy_j, energy_at_refresh, 1e-9);
  // The refresh at 0.3 s averages 0.05 s idle and 0.05 s busy.
  EXPECT_NEAR(*after.power_instant_w,
              0.5 * (gpu.spec().idle_power_w + sim::busy_power_w(gpu.spec(), compute_bound(), 1380, 877)),
              1e-6);
}

TEST(SimPhysics, AveragedPowerLagsByItsWindow) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  auto& clock = virtual_clock(gpu);
  const SimKernel load = compute_bound();
  const double idle = gpu.spec().idle_power_w;
  clock.advance_to(1.0);
  gpu.set_background_load(load);
  const double busy = sim::busy_power_w(gpu.spec(), load, 1980, 3201);
  clock.advance_to(1.55);  // last refresh at 1.5 s: half the 1 s window busy
  Telemetry t = gpu.read_telemetry();
  EXPECT_NEAR(*t.power_instant_w, busy, 1e-6);
  EXPECT_NEAR(*t.power_average_w, 0.5 * (idle + busy), 1e-6);
  clock.advance_to(2.05);
  t = gpu.read_telemetry();
  EXPECT_NEAR(*t.power_average_w, busy, 1e-6);
  EXPECT_EQ(t.gpu_utilization_pct, 100);
}

TEST(SimPhysics, EnergyIsIntegratedExactly) {
  const SimGpuSpec& spec = sim_gpu_spec("v100");
  SimGpu gpu(spec, SimTimeMode::virtual_time);
  const SimKernel kernel{0.001, 0.020, 0.7, 0.9, 0.8};
  double expected = 0;
  double now = 0;
  for (int clock_mhz : {1380, 1005, 510}) {
    gpu.clock().sleep_for(0.37);
    expected += 0.37 * spec.idle_power_w;
    gpu.lock_sm_clocks(clock_mhz, clock_mhz);
    const double took = gpu.run(kernel, 33);
    EXPECT_NEAR(took, 33 * sim::kernel_seconds(spec, kernel, clock_mhz, 877), 1e-9);
    expected += took * sim::busy_power_w(spec, kernel, clock_mhz, 877);
    now += 0.37 + took;
  }
  EXPECT_NEAR(gpu.clock().now_s(), now, 1e-9);
  EXPECT_NEAR(gpu.true_energy_j(), expected, 1e-9 * expected);
  // The counter lags the truth by at most one sensor period of power.
  const double counter = *gpu.read_telemetry().energy_j;
  EXPECT_LE(counter, gpu.true_energy_j());
  EXPECT_GE(counter, gpu.true_energy_j() - 0.1 * 250);
}

TEST(SimPhysics, TimersDuringRunSeeThatMoment) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  auto& clock = virtual_clock(gpu);
  gpu.lock_sm_clocks(1005, 1005);
  int samples = 0;
  double last_energy = 0;
  const auto handle = clock.every(0.05, [&](double now) {
    const Telemetry t = gpu.read_telemetry();
    EXPECT_DOUBLE_EQ(t.time_s, now);
    EXPECT_EQ(t.sm_mhz, 1005);
    EXPECT_NEAR(gpu.true_energy_j(), last_energy + 0.05 * sim::busy_power_w(gpu.spec(), heavy(), 1005, 877),
                1e-6);
    last_energy = gpu.true_energy_j();
    ++samples;
  });
  const double took = gpu.run(heavy(), 200);
  clock.cancel(handle);
  EXPECT_EQ(samples, static_cast<int>(std::floor(took / 0.05 + 1e-9)));
  EXPECT_GT(samples, 40);
}

TEST(SimPhysics, TimerCanRetuneARunningJob) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  auto& clock = virtual_clock(gpu);
  const SimKernel kernel{0.0, 0.010, 1.0, 0.8, 0.5};
  gpu.lock_sm_clocks(1035, 1035);
  // Three quarters through the work at 1035 MHz (1.33 s in all), go to 1380 MHz:
  // the last 25 repeats take 0.25 s.
  clock.every(1.0, [&](double) { gpu.lock_sm_clocks(1380, 1380); });
  const double took = gpu.run(kernel, 100);
  EXPECT_NEAR(took, 1.0 + 0.25, 1e-9);
}

TEST(SimPhysics, TemperatureRisesUnderLoadAndSettles) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  const double idle_c = *gpu.read_telemetry().gpu_temperature_c;
  gpu.set_background_load(heavy());
  gpu.clock().sleep_for(10);
  const double warm_c = *gpu.read_telemetry().gpu_temperature_c;
  gpu.clock().sleep_for(600);
  const double hot_c = *gpu.read_telemetry().gpu_temperature_c;
  EXPECT_GT(warm_c, idle_c);
  EXPECT_GT(hot_c, warm_c);
  const double steady_c = gpu.spec().ambient_temperature_c +
                          gpu.spec().thermal_resistance_c_per_w *
                              sim::busy_power_w(gpu.spec(), heavy(), gpu.effective_sm_mhz(), 877);
  EXPECT_NEAR(hot_c, steady_c, 0.01);
}

}  // namespace
}  // namespace dvfslab
