// Fitting the simulated chip's constants to core-clock families
// (src/study/chip_fit.cpp): a family the twin made with other constants is fitted
// closer than the start, a faster board continues the chip's voltage curve, and a
// statistic that cannot be computed never wins.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "dvfslab/sim_gpu.hpp"
#include "study/chip_fit.hpp"

namespace dvfslab {
namespace {

using calibration::ChipConstants;
using calibration::CurveReading;
using calibration::PublishedFamily;

// Kernels from memory-bound to SM-bound, drawing little to much, on `board` made
// by the chip with `constants`, at every fourth supported clock.
PublishedFamily family_made_by(const SimGpuSpec& chip, const std::string& board_key,
                               const ChipConstants& constants) {
  const SimGpuSpec board = calibration::board_with(chip, sim_gpu_spec(board_key), constants);
  const auto& clocks = board.graphics_mhz.front();
  PublishedFamily family{"made", board_key, calibration::Knob::core_clock, {}};
  int index = 0;
  for (const double compute_fraction : {0.4, 0.7, 0.95}) {
    for (const double activity : {0.3, 0.6, 0.9}) {
      SimKernel kernel{0.0, 0.05, compute_fraction, activity, 0.8};
      kernel.slow_clock_gain = 0.3;
      SimGpu gpu(board, SimTimeMode::virtual_time);
      std::vector<CurveReading>& curve = family.curves["kernel " + std::to_string(index++)];
      for (std::size_t i = 0; i < clocks.size(); i += 4) {
        if (clocks[i] < 400) break;
        gpu.lock_sm_clocks(clocks[i], clocks[i]);
        const double before = gpu.true_energy_j();
        const double seconds = gpu.run(kernel);
        curve.push_back(CurveReading{double(clocks[i]), seconds, (gpu.true_energy_j() - before) / seconds});
      }
    }
  }
  return family;
}

TEST(ChipFit, AFamilyMadeWithOtherConstantsIsFittedCloserThanTheStart) {
  const SimGpuSpec& chip = sim_gpu_spec("v100");
  const ChipConstants start = calibration::chip_constants_of(chip);
  ChipConstants truth = start;
  truth.voltage_knee_mhz = 700;
  truth.voltage_min_v = 0.66;
  truth.static_power_w = 45;
  const std::vector<PublishedFamily> families{family_made_by(chip, "v100", truth)};
  const double start_miss =
      calibration::family_miss(calibration::simulated_statistics(chip, families[0], start),
                               calibration::statistics_of(calibration::curve_statistics(families[0].curves),
                                                          calibration::Knob::core_clock));
  const auto fit = calibration::fit_chip_constants(chip, families, start);
  EXPECT_GT(start_miss, 1.0);
  EXPECT_LT(fit.miss, 0.1 * start_miss);
  EXPECT_GT(fit.evaluations, 10);
  // The same search again gives the same constants.
  const auto again = calibration::fit_chip_constants(chip, families, start);
  EXPECT_EQ(again.constants.voltage_knee_mhz, fit.constants.voltage_knee_mhz);
  EXPECT_EQ(again.miss, fit.miss);
}

TEST(ChipFit, AFasterBoardContinuesTheChipsVoltageCurve) {
  const SimGpuSpec& chip = sim_gpu_spec("v100");
  const ChipConstants hand_set = calibration::chip_constants_of(chip);
  // With the chip's own constants, the SXM2 board is the built-in one.
  const SimGpuSpec sxm2 = calibration::board_with(chip, sim_gpu_spec("v100sxm2"), hand_set);
  EXPECT_DOUBLE_EQ(sxm2.voltage_max_v, sim_gpu_spec("v100sxm2").voltage_max_v);
  ChipConstants lower_knee = hand_set;
  lower_knee.voltage_knee_mhz = 700;
  const SimGpuSpec refitted = calibration::board_with(chip, sim_gpu_spec("v100sxm2"), lower_knee);
  // 0.76 + 0.24 × ((1530 − 700) / (1380 − 700))^1.5
  EXPECT_NEAR(refitted.voltage_max_v, 0.76 + 0.24 * std::pow(830.0 / 680.0, 1.5), 1e-12);
  EXPECT_EQ(refitted.voltage_knee_mhz, 700);
  // The chip's own board keeps its top voltage.
  EXPECT_EQ(calibration::board_with(chip, chip, lower_knee).voltage_max_v, chip.voltage_max_v);
}

TEST(ChipFit, AStatisticThatCannotBeComputedIsAMissOfNaN) {
  const calibration::FamilyStatistics real{0.68, 0.01, 0.24, 0.29};
  calibration::FamilyStatistics flat = real;
  flat.spread = std::nan("");  // every curve flat: no optimum to spread
  EXPECT_TRUE(std::isnan(calibration::family_miss(flat, real)));
  EXPECT_DOUBLE_EQ(calibration::family_miss(real, real), 0.0);
  calibration::FamilyStatistics off = real;
  off.slowdown += 0.08;  // one tolerance
  EXPECT_DOUBLE_EQ(calibration::family_miss(off, real), 1.0);
}

}  // namespace
}  // namespace dvfslab
