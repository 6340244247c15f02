// Window boundaries read only what their energy needs (Gpu::read_boundary_telemetry):
// a training loop's per-step windows must not wait for a full reading, and the
// windows' clocks, temperatures and throttle fractions must not change for it.
#include <gtest/gtest.h>

#include "dvfslab/meter.hpp"
#include "stepped_sensor_gpu.hpp"

namespace dvfslab {
namespace {

using testing::SteppedSensorGpu;

constexpr double sensor_period = 0.1;

// A window with a clock change and a throttle phase, closed by end() and by restart().
std::vector<Measurement> measure_phases(SteppedSensorGpu& gpu) {
  gpu.set_throttle([](double t) { return t >= 1.0 && t < 2.0 ? throttle::sw_power_cap : std::uint64_t{0}; });
  EnergyMeter meter(gpu);
  meter.start();
  meter.begin("run");
  gpu.virtual_clock().advance(1.53);
  gpu.set_sm_mhz(990);
  std::vector<Measurement> windows;
  windows.push_back(meter.restart("run"));
  gpu.virtual_clock().advance(2.21);
  windows.push_back(meter.end("run"));
  return windows;
}

TEST(MeterBoundaries, UseTheBoundaryReadingNotAFullOne) {
  SteppedSensorGpu gpu({{1e9, 400.0}}, sensor_period);
  gpu.use_light_boundaries();
  EnergyMeter meter(gpu);
  meter.start();
  const int full_reads = gpu.reads();
  meter.begin("step");
  for (int i = 0; i < 5; ++i) meter.restart("step");
  meter.end("step");
  EXPECT_EQ(gpu.boundary_reads(), 7);
  EXPECT_EQ(gpu.reads(), full_reads) << "a boundary made a full reading";
}

TEST(MeterBoundaries, LightBoundariesGiveTheSameWindowsAsFullReadings) {
  SteppedSensorGpu full_gpu({{0.7, 300.0}, {2.9, 650.0}, {1e9, 420.0}}, sensor_period);
  SteppedSensorGpu light_gpu({{0.7, 300.0}, {2.9, 650.0}, {1e9, 420.0}}, sensor_period);
  light_gpu.use_light_boundaries();
  const auto full = measure_phases(full_gpu);
  const auto light = measure_phases(light_gpu);
  ASSERT_GT(light_gpu.boundary_reads(), 0);
  ASSERT_EQ(full.size(), light.size());
  for (std::size_t i = 0; i < full.size(); ++i) {
    EXPECT_DOUBLE_EQ(light[i].energy_j, full[i].energy_j) << i;
    EXPECT_DOUBLE_EQ(light[i].duration_s, full[i].duration_s) << i;
    ASSERT_TRUE(light[i].sm_mhz_mean && full[i].sm_mhz_mean) << i;
    // The boundary carries the clock of the latest full reading (at most one sample old).
    EXPECT_NEAR(*light[i].sm_mhz_mean, *full[i].sm_mhz_mean, 990.0 * 0.05 / full[i].duration_s + 1e-9) << i;
    EXPECT_EQ(light[i].sm_mhz_min, full[i].sm_mhz_min) << i;
    ASSERT_TRUE(light[i].temperature_c_max && full[i].temperature_c_max) << i;
    EXPECT_NEAR(*light[i].temperature_c_max, *full[i].temperature_c_max, 0.05 + 1e-9) << i;
    EXPECT_EQ(light[i].throttle_fraction.count("sw_power_cap"), full[i].throttle_fraction.count("sw_power_cap"));
    if (full[i].throttle_fraction.count("sw_power_cap")) {
      EXPECT_NEAR(light[i].throttle_fraction.at("sw_power_cap"), full[i].throttle_fraction.at("sw_power_cap"),
                  0.05 / full[i].duration_s + 1e-9)
          << i;
    }
  }
}

}  // namespace
}  // namespace dvfslab
