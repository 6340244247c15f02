// The clock check behind the clock_mismatch flag (dvfslab/clock_check.hpp): which
// GPUs' readings it compares with the requested setting.
#include <gtest/gtest.h>

#include <optional>

#include "dvfslab/clock_check.hpp"

namespace dvfslab {
namespace {

Measurement at_clock(double sm_mhz) {
  Measurement m;
  m.sm_mhz_mean = sm_mhz;
  return m;
}

// A window of a two-GPU job: GPU 0 at `first`, GPU 1 at `second`; their mean as the
// window's own reading, as the meter's totals give it.
Measurement job(double first, double second) {
  Measurement m = at_clock((first + second) / 2);
  m.gpus = {{"GPU-0", 0, "GPU", at_clock(first)}, {"GPU-1", 1, "GPU", at_clock(second)}};
  return m;
}

const Setting sm_1500{1500, std::nullopt, std::nullopt};

TEST(ClockCheck, OneGpuIsCheckedOnItsReadingWithTheClockTablesSlack) {
  EXPECT_FALSE(clock_differs(sm_1500, at_clock(1500), std::nullopt));
  EXPECT_FALSE(clock_differs(sm_1500, at_clock(1486), std::nullopt)) << "within 15 MHz";
  EXPECT_TRUE(clock_differs(sm_1500, at_clock(1410), std::nullopt));
  EXPECT_FALSE(clock_differs(Setting{}, at_clock(1410), std::nullopt)) << "nothing was requested";
}

// In a stage of a per-GPU search the other GPU holds its own clock (here idle at
// 345 MHz): the mean of the two, 922 MHz, says nothing of the varied GPU.
TEST(ClockCheck, AStageChecksItsVariedGpuAloneAndAJobEveryGpu) {
  const Measurement window = job(1500, 345);
  EXPECT_FALSE(clock_differs(sm_1500, window, 0)) << "GPU 0 varied, at the requested clock";
  EXPECT_TRUE(clock_differs(sm_1500, window, 1)) << "GPU 1 varied, not at it";
  EXPECT_TRUE(clock_differs(sm_1500, window, std::nullopt))
      << "the whole job got 1500 MHz; GPU 1 did not run it";
  EXPECT_FALSE(clock_differs(sm_1500, job(1500, 1500), std::nullopt));
}

// A GPU that reports its utilization: 1500 MHz while busy, resting at 345 MHz when
// idle, so the window's mean is lower than any clock it ran work at.
Measurement busy_part_of_the_time(double busy_fraction, std::optional<double> busy_sm_mhz) {
  Measurement m = at_clock(busy_fraction * busy_sm_mhz.value_or(0) + (1 - busy_fraction) * 345);
  m.busy_fraction = busy_fraction;
  m.sm_mhz_busy_mean = busy_sm_mhz;
  return m;
}

TEST(ClockCheck, AGpuReportingItsUtilizationIsJudgedOnItsClockUnderLoad) {
  EXPECT_FALSE(clock_differs(sm_1500, busy_part_of_the_time(0.6, 1500), std::nullopt))
      << "idle pauses lower the mean (1038 MHz), not the clock work ran at";
  EXPECT_TRUE(clock_differs(sm_1500, busy_part_of_the_time(0.6, 1200), std::nullopt));
  EXPECT_FALSE(clock_differs(sm_1500, busy_part_of_the_time(0.0, std::nullopt), std::nullopt))
      << "never busy: nothing ran that could show the setting";
  // A job-wide setting: GPU 1 got no work and rested at 345 MHz.
  Measurement window = at_clock(922);
  window.gpus = {{"GPU-0", 0, "GPU", busy_part_of_the_time(1.0, 1500)},
                 {"GPU-1", 1, "GPU", busy_part_of_the_time(0.0, std::nullopt)}};
  EXPECT_FALSE(clock_differs(sm_1500, window, std::nullopt));
  window.gpus[1].measurement = busy_part_of_the_time(0.5, 1400);
  EXPECT_TRUE(clock_differs(sm_1500, window, std::nullopt)) << "GPU 1 worked at another clock";
}

TEST(ClockCheck, ASettingIsNotAppliedWhenTheClockDiffersWithNoLimitToExplainIt) {
  MeasurementFlags flags;
  EXPECT_FALSE(flags.setting_not_applied());
  flags.clock_mismatch = true;
  EXPECT_TRUE(flags.setting_not_applied());
  flags.power_throttle = true;
  EXPECT_FALSE(flags.setting_not_applied()) << "the power cap lowered the clock it was given";
  flags.power_throttle = false;
  flags.thermal_throttle = true;
  EXPECT_FALSE(flags.setting_not_applied());
}

}  // namespace
}  // namespace dvfslab
