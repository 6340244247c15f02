// Windows shorter than many sensor periods on a simulated H200, whose counter and
// instant power update every 100 ms: the meter estimates energy between the
// counter's updates (issue 13, item 2), each window within its error estimate of
// the simulator's true energy, and repeated windows agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dvfslab/meter.hpp"
#include "dvfslab/sim_gpu.hpp"

namespace dvfslab {
namespace {

const SimKernel steady_load{0.0, 0.5, 0.9, 1.0, 0.4};

struct Spread {
  double relative_range = 0;  // (max - min) / mean
  std::size_t outside_error = 0;
};

// `count` windows of `seconds`, each starting off the sensor's grid at a
// different phase, with the steady load running throughout.
Spread repeated_windows(double seconds, int count) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  auto& clock = dynamic_cast<VirtualClock&>(gpu.clock());
  EnergyMeter meter(gpu);
  meter.start();
  gpu.set_background_load(steady_load);
  clock.advance(3.0);
  std::vector<double> energies;
  Spread spread;
  for (int i = 0; i < count; ++i) {
    clock.advance(0.0137 * (i % 7) + 0.0021 * i);  // a gap of varying phase
    const double truth_start = gpu.true_energy_j();
    meter.begin("window");
    clock.advance(seconds);
    const Measurement m = meter.end("window");
    const double truth = gpu.true_energy_j() - truth_start;
    EXPECT_TRUE(m.energy_j && m.energy_error_j) << "window " << i;
    if (!m.energy_j || !m.energy_error_j) continue;
    // Per second: the gaps shift the ends by a few microseconds of clock rounding.
    energies.push_back(*m.energy_j / m.duration_s);
    if (std::abs(*m.energy_j - truth) > *m.energy_error_j + 1e-9) {
      ++spread.outside_error;
      ADD_FAILURE() << "window " << i << ": " << *m.energy_j << " J, true " << truth << " J, error estimate "
                    << *m.energy_error_j << " J";
    }
  }
  const auto [low, high] = std::minmax_element(energies.begin(), energies.end());
  double mean = 0;
  for (double e : energies) mean += e / static_cast<double>(energies.size());
  spread.relative_range = (*high - *low) / mean;
  return spread;
}

TEST(MeterInterpolation, RepeatedTwoSecondWindowsAgreeWithinHalfAPercent) {
  const Spread spread = repeated_windows(2.0, 20);
  EXPECT_LT(spread.relative_range, 0.005);
  EXPECT_EQ(spread.outside_error, 0u);
}

TEST(MeterInterpolation, RepeatedHalfSecondWindowsAgreeWithinTwoPercent) {
  const Spread spread = repeated_windows(0.5, 20);
  EXPECT_LT(spread.relative_range, 0.02);
  EXPECT_EQ(spread.outside_error, 0u);
}

}  // namespace
}  // namespace dvfslab
