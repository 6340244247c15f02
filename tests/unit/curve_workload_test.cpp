// Reading a measured core-clock curve's workload as a simulated kernel
// (src/study/curve_workload.cpp): a curve the twin itself made gives its kernel
// back, and curves it cannot be read from are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "dvfslab/error.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "study/curve_workload.hpp"

namespace dvfslab {
namespace {

using calibration::CurveReading;

// The curve `kernel` draws on `spec` at `clocks`, each run once on virtual time.
std::vector<CurveReading> curve_of(const SimGpuSpec& spec, const SimKernel& kernel,
                                   const std::vector<int>& clocks) {
  SimGpu gpu(spec, SimTimeMode::virtual_time);
  std::vector<CurveReading> curve;
  for (int clock : clocks) {
    gpu.lock_sm_clocks(clock, clock);
    const double before = gpu.true_energy_j();
    const double seconds = gpu.run(kernel);
    curve.push_back(
        CurveReading{static_cast<double>(clock), seconds, (gpu.true_energy_j() - before) / seconds});
  }
  return curve;
}

TEST(CurveWorkload, ACurveOfTheTwinGivesItsKernelBack) {
  const SimGpuSpec& spec = sim_gpu_spec("v100sxm2");
  for (const double compute_fraction : {0.35, 0.8, 1.0}) {
    // None: the GPU's stretch (0.6); 0: none at all; 1.5: more than the GPU's.
    for (const std::optional<double> gain :
         {std::optional<double>{}, std::optional<double>{0.0}, std::optional<double>{1.5}}) {
      SCOPED_TRACE(testing::Message() << compute_fraction << " " << gain.value_or(-1));
      SimKernel made{0.0, 0.25, compute_fraction, 0.6, 0.85};
      made.slow_clock_gain = gain;
      // Out of order, as a table may list them; 1005 MHz is the lowest the stretch
      // (below 1000 MHz) does not reach.
      const auto curve = curve_of(spec, made, {1297, 487, 1530, 1005, 802});
      const SimKernel read = calibration::kernel_from_core_curve(spec, curve, 0.85);
      EXPECT_EQ(read.fixed_s, 0.0);
      EXPECT_NEAR(read.scalable_s, 0.25, 1e-12);
      EXPECT_NEAR(read.compute_fraction, compute_fraction, 1e-9);
      ASSERT_TRUE(read.slow_clock_gain.has_value());
      EXPECT_NEAR(*read.slow_clock_gain, gain.value_or(spec.slow_clock_gain), 1e-9);
      EXPECT_NEAR(read.core_activity, 0.6, 1e-9);
      EXPECT_EQ(read.memory_activity, 0.85);
    }
  }
}

TEST(CurveWorkload, AKernelThatOnlyWaitsOnMemoryHasNoStretchToRead) {
  const SimGpuSpec& spec = sim_gpu_spec("v100sxm2");
  const auto curve = curve_of(spec, SimKernel{0.0, 0.25, 0.0, 0.3, 0.85}, {487, 1005, 1530});
  const SimKernel read = calibration::kernel_from_core_curve(spec, curve, 0.85);
  EXPECT_EQ(read.compute_fraction, 0.0);
  EXPECT_FALSE(read.slow_clock_gain.has_value());
  // Nor does a curve whose lowest clock the stretch does not reach.
  const auto high = curve_of(spec, SimKernel{0.0, 0.25, 0.7, 0.3, 0.85}, {1005, 1530});
  EXPECT_FALSE(calibration::kernel_from_core_curve(spec, high, 0.85).slow_clock_gain.has_value());
}

TEST(CurveWorkload, ClocksMapAsFractionsOfTheTopOntoTheTwin) {
  const SimGpuSpec& pcie = sim_gpu_spec("v100");
  // 1530 MHz is the SXM2 board's top: the PCIe twin's top, 1380.
  EXPECT_EQ(calibration::mapped_clock_mhz(pcie, 1530, 1530), 1380);
  // 1005 of 1530 is 906.5 MHz on the PCIe twin; its nearest clock is 907.
  EXPECT_EQ(calibration::mapped_clock_mhz(pcie, 1005, 1530), 907);
  EXPECT_EQ(calibration::nearest_supported_mhz({1380, 1372, 1365}, 1368.5), 1372);
}

TEST(CurveWorkload, PowerAboveWhatTheCoreCanDrawIsReadAsActivityAndBelowItAsNone) {
  const SimGpuSpec& spec = sim_gpu_spec("v100sxm2");
  auto curve = curve_of(spec, SimKernel{0.0, 0.1, 1.0, 0.5, 0.85}, {1005, 1530});
  curve.back().power_w = 20;  // less than the board's static power alone
  EXPECT_EQ(calibration::kernel_from_core_curve(spec, curve, 0.85).core_activity, 0.0);
}

// The curve `kernel` draws on `spec` under each of `limits_w`.
std::vector<CurveReading> limit_curve_of(const SimGpuSpec& spec, const SimKernel& kernel,
                                         const std::vector<double>& limits_w) {
  SimGpu gpu(spec, SimTimeMode::virtual_time);
  std::vector<CurveReading> curve;
  for (double limit : limits_w) {
    gpu.set_power_limit(limit);
    const double before = gpu.true_energy_j();
    const double seconds = gpu.run(kernel);
    curve.push_back(CurveReading{limit, seconds, (gpu.true_energy_j() - before) / seconds});
  }
  return curve;
}

TEST(CurveWorkload, APowerLimitCurveOfTheTwinGivesItsDrawAndItsTimeUnderTheLowestLimitBack) {
  const SimGpuSpec& spec = sim_gpu_spec("v100");
  for (const double compute_fraction : {0.2, 0.55, 0.9}) {
    SCOPED_TRACE(compute_fraction);
    // Draws about 200 W unlimited: every limit below 200 W binds.
    const SimKernel made{0.0, 2.0, compute_fraction, 0.85, 0.8};
    const auto curve = limit_curve_of(spec, made, {175, 100, 250, 125});
    const SimKernel read = calibration::kernel_from_power_limit_curve(spec, curve, 0.8);
    EXPECT_NEAR(read.scalable_s, 2.0, 1e-12);
    EXPECT_NEAR(read.core_activity, 0.85, 1e-9);
    EXPECT_FALSE(read.slow_clock_gain.has_value());
    // Under a binding limit the time depends little on the SM-bound share (a more
    // SM-bound kernel draws less per clock and gets a higher one), and not
    // monotonically, clock step by clock step: the share read is one that costs the
    // curve's time under 100 W, within those steps, not necessarily the one made.
    const auto reread = limit_curve_of(spec, read, {100, 250});
    EXPECT_NEAR(reread[0].time_s / reread[1].time_s, curve[1].time_s / curve[2].time_s, 0.02);
    EXPECT_NEAR(read.compute_fraction, compute_fraction, 0.1);
  }
  // A limit the board does not offer is refused.
  EXPECT_THROW(calibration::kernel_from_power_limit_curve(spec, {{50, 3.0, 45}, {250, 2.0, 200}}, 0.8),
               ConfigError);
}

TEST(CurveWorkload, CurvesWithoutAReadableClockAreRefused) {
  const SimGpuSpec& spec = sim_gpu_spec("v100sxm2");
  const std::vector<CurveReading> one_clock{{1530, 0.1, 200}};
  EXPECT_THROW(calibration::kernel_from_core_curve(spec, one_clock, 0.85), ConfigError);
  const std::vector<CurveReading> same_clock_twice{{1530, 0.1, 200}, {1530, 0.1, 201}};
  EXPECT_THROW(calibration::kernel_from_core_curve(spec, same_clock_twice, 0.85), ConfigError);
  // Readings no workload could have drawn.
  for (const CurveReading bad :
       {CurveReading{1005, 0.0, 150}, CurveReading{1005, -0.2, 150}, CurveReading{1005, std::nan(""), 150},
        CurveReading{1005, 0.2, 0}, CurveReading{1005, 0.2, INFINITY}}) {
    EXPECT_THROW(calibration::kernel_from_core_curve(spec, {bad, {1530, 0.1, 200}}, 0.85), ConfigError);
    EXPECT_THROW(calibration::kernel_from_power_limit_curve(
                     sim_gpu_spec("v100"), {{250, 0.1, 200}, {100, bad.time_s, bad.power_w}}, 0.85),
                 ConfigError);
  }
  // Every clock below the stretch: how SM-bound the work is cannot be told apart
  // from the board's stretch.
  try {
    calibration::kernel_from_core_curve(spec, {{600, 0.3, 90}, {900, 0.2, 120}, {1530, 0.1, 200}}, 0.85);
    FAIL() << "a curve with no clock above the stretch was read";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no clock between 1000 MHz and the top"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dvfslab
