// EnergyMeter on simulated GPUs, whose exact energy is known (SimGpu::true_energy_j):
// synthetic load phases — idle, compute-bound, memory-bound, power-capped — on
// the virtual clock.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "dvfslab/meter.hpp"
#include "dvfslab/sim_gpu.hpp"

namespace dvfslab {
namespace {

const SimKernel compute_bound{0.0, 0.5, 0.95, 1.0, 0.3};
const SimKernel memory_bound{0.0, 0.5, 0.1, 0.4, 1.0};

class MeterOnSimGpu : public ::testing::Test {
 protected:
  SimGpu gpu_{sim_gpu_spec("h200"), SimTimeMode::virtual_time};
  VirtualClock& clock() { return dynamic_cast<VirtualClock&>(gpu_.clock()); }

  // The phases of the test plan, about `seconds` each.
  void run_phases(double seconds) {
    clock().advance(seconds);                // idle
    gpu_.run(compute_bound, seconds / 0.5);  // compute-bound
    gpu_.run(memory_bound, seconds / 0.5);   // memory-bound
    gpu_.set_power_limit(sim_gpu_spec("h200").power_limit_min_w);
    gpu_.run(compute_bound, seconds / 0.5);  // power-capped: the clock drops
    gpu_.reset_power_limit();
  }
};

TEST_F(MeterOnSimGpu, CounterEnergyIsWithinOneTenthOfAPercentOfTruth) {
  EnergyMeter meter(gpu_);
  meter.start();
  clock().advance(1.234);  // off the sensor grid
  const double truth_start = gpu_.true_energy_j();
  meter.begin("phases");
  run_phases(60.0);
  const Measurement m = meter.end("phases");
  const double truth = gpu_.true_energy_j() - truth_start;
  ASSERT_TRUE(m.energy_j);
  EXPECT_LT(std::abs(*m.energy_j - truth) / truth, 0.001) << *m.energy_j << " J vs true " << truth << " J";
  EXPECT_FALSE(m.flags.energy_estimated);
  EXPECT_TRUE(m.flags.power_throttle);
  EXPECT_GT(m.throttle_fraction.at("sw_power_cap"), 0.15);
  EXPECT_LT(*m.sm_mhz_min, gpu_.spec().boost_graphics_mhz());
}

TEST_F(MeterOnSimGpu, IntegratedPowerIsWithinWhatTheSensorImplies) {
  EnergyMeter meter(gpu_);
  meter.start();
  const double truth_start = gpu_.true_energy_j();
  meter.begin("phases");
  run_phases(30.0);
  const Measurement m = meter.end("phases");
  const double truth = gpu_.true_energy_j() - truth_start;
  ASSERT_TRUE(m.energy_integrated_j);
  // Instant power is the mean over the last sensor period: each of the phase
  // changes (at most peak power apart) is seen up to one sensor period late and
  // smeared over one sample period.
  const double bound = 4 * *m.peak_power_w * (gpu_.spec().sensor_period_s + meter.sample_period_s());
  EXPECT_NEAR(*m.energy_integrated_j, truth, bound);
}

TEST_F(MeterOnSimGpu, ShortWindowIsFlaggedAndEstimated) {
  EnergyMeter meter(gpu_);
  meter.start();
  gpu_.set_background_load(compute_bound);
  clock().advance(2.01);
  meter.begin("blip");
  clock().advance(0.05);
  const Measurement m = meter.end("blip");
  EXPECT_TRUE(m.flags.short_window);
  EXPECT_TRUE(m.flags.energy_estimated);
  ASSERT_TRUE(m.energy_j);
  // The steady load's power held over the window.
  EXPECT_NEAR(*m.energy_j / 0.05, *m.peak_power_w, 1e-6);
}

TEST_F(MeterOnSimGpu, NestedWindowsAddUp) {
  EnergyMeter meter(gpu_);
  meter.start();
  meter.begin("all");
  meter.begin("compute");
  gpu_.run(compute_bound, 20);
  meter.add_iterations(20, 20 * 128);
  const Measurement compute = meter.end("compute");
  meter.begin("memory");
  gpu_.run(memory_bound, 30);
  meter.add_iterations(30, 30 * 128);
  const Measurement memory = meter.end("memory");
  const Measurement all = meter.end("all");
  EXPECT_NEAR(*compute.energy_j + *memory.energy_j, *all.energy_j, 1e-6);
  EXPECT_NEAR(compute.duration_s + memory.duration_s, all.duration_s, 1e-9);
  EXPECT_EQ(all.iterations, 50);
  EXPECT_GT(*compute.mean_power_w, *memory.mean_power_w);
}

TEST_F(MeterOnSimGpu, IdleBaselineIsTheIdlePower) {
  MeterOptions options;
  options.idle_seconds = 5.0;
  EnergyMeter meter(gpu_, options);
  meter.start();
  ASSERT_TRUE(meter.idle_power_w());
  EXPECT_NEAR(*meter.idle_power_w(), gpu_.spec().idle_power_w, 0.01 * gpu_.spec().idle_power_w);
  meter.begin("load");
  gpu_.run(compute_bound, 40);
  const Measurement m = meter.end("load");
  const auto json = to_json(m, meter.idle_power_w());
  EXPECT_NEAR(json["dynamic_energy_j"].get<double>(), *m.energy_j - *meter.idle_power_w() * m.duration_s,
              1e-6);
  EXPECT_GT(json["dynamic_energy_j"].get<double>(), 0.0);
}

}  // namespace
}  // namespace dvfslab
