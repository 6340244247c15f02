// The built-in simulated GPUs against the published sweeps and the H200's own
// readings, within issue 14's tolerances (docs/simulation.md#calibration; the
// full table is bench/sim_calibration's output in docs/results/sim_calibration.txt).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "dvfslab/sim_gpu.hpp"
#include "study/sim_calibration.hpp"

namespace dvfslab {
namespace {

TEST(SimCalibration, BuiltInGpusMatchTheirFamiliesWithinTolerance) {
  const auto rows = calibration::calibration_table(
      DVFSLAB_SHARED_DATA_DIR,
      std::string(DVFSLAB_DOCS_DIR) + "/results/h200/default_sweep/measurements.json");
  int checked = 0, known_gaps = 0;
  for (const auto& row : rows) {
    if (row.tolerance <= 0) continue;
    const std::string line = row.family + ", " + row.gpu + ": " + row.statistic + ": real " +
                             std::to_string(row.real) + ", simulated " + std::to_string(row.simulated);
    if (!row.known_gap.empty()) {
      // Shown, not gated; once it passes the mark goes and the statistic is gated.
      ++known_gaps;
      std::printf("known gap (%s): %s\n", row.known_gap.c_str(), line.c_str());
      EXPECT_FALSE(row.passes()) << line << ": passes now, so gate it (remove its known_gap)";
      continue;
    }
    ++checked;
    EXPECT_TRUE(row.passes()) << line;
  }
  // 6 families × 3 curve statistics, 2 memory ratios, 12 H200 cases × 2, the spread
  // of optima where it matches (the V100 kernels' against sim:v100, sim:a100,
  // sim:h200; the P100 power limit); of the dense V100-SXM2 set on sim:v100sxm2 the
  // built-in workloads' low-clock power and all four of each curve's own workload;
  // of the V100 kernels run by their own workloads all but the spread; of the two
  // power-limit families run by theirs three each. Known gaps: the built-in
  // workloads' optimum, slowdown and spread on the dense set, the V100 kernels'
  // spread under their own workloads, the V100 traces' slowdown and the P100 traces'
  // low-limit power under theirs, and the spread of the V100 power limit and of
  // sim:rtx2080ti against the V100 kernels.
  EXPECT_EQ(checked, 6 * 3 + 2 + 24 + 4 + 1 + 4 + 3 + 3 + 3);
  EXPECT_EQ(known_gaps, 3 + 1 + 2 + 2);
}

TEST(SimCalibration, PublishedStatisticsAreTheIssuesFigures) {
  const std::string data = DVFSLAB_SHARED_DATA_DIR;
  const auto v100 =
      calibration::published_curves(data + "/v100-kernels-core.csv", calibration::Knob::core_clock);
  ASSERT_EQ(v100.size(), 20u);
  std::vector<double> relative_power;
  for (const auto& curve : v100) relative_power.push_back(curve.relative_power_lowest);
  EXPECT_NEAR(calibration::median(relative_power), 0.29, 0.005);  // issue 14: "real 0.29"
  const auto pascal = calibration::published_memory_sensitivity(data + "/pascal-caffe-dnn-core-mem.csv");
  EXPECT_NEAR(pascal.memory_fraction, 0.7, 1e-9);
  EXPECT_GT(pascal.time_ratio, 1.14);  // "memory clock × 0.7 costs 14–19 % time"
  EXPECT_LT(pascal.time_ratio, 1.22);
}

TEST(SimCalibration, QuantilesInterpolateBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(calibration::quantile({4, 1, 3, 2}, 0.1), 1.3);
  EXPECT_DOUBLE_EQ(calibration::quantile({4, 1, 3, 2}, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(calibration::quantile({5}, 0.9), 5);
  EXPECT_DOUBLE_EQ(calibration::median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(calibration::median({3, 1, 2}), 2);
  EXPECT_TRUE(std::isnan(calibration::quantile({}, 0.5)));
}

TEST(SimCalibration, EnergyOptimaVaryByWorkload) {
  const SimGpuSpec& spec = sim_gpu_spec("v100");
  std::vector<double> every_clock;
  for (int clock : spec.graphics_mhz.front()) every_clock.push_back(static_cast<double>(clock) / 1380);
  std::set<double> optima;
  for (const auto& curve : calibration::simulated_core_curves("v100", every_clock)) {
    optima.insert(curve.optimum_fraction);
  }
  EXPECT_GE(optima.size(), 4u);
}

// What spreads the optimum on the simulated V100, and how far: kernels as
// compute-bound as the dense V100-SXM2 microbenchmarks (time as 1/f) drawing
// 129–234 W at the top clock, as the 10th to 90th percentile of theirs do. On the
// real set the optimum falls as power rises (rank correlation −0.70) over 0.60–0.74
// of the top clock; the twin's falls too, but over 0.67–0.72 only: no clock under
// the voltage knee (0.62 of the top) is ever worth its time (docs/simulation.md).
TEST(SimCalibration, MorePowerMovesTheOptimumDownButLessThanOnRealKernels) {
  const SimGpuSpec& spec = sim_gpu_spec("v100");
  const auto& clocks = spec.graphics_mhz.front();
  std::vector<double> optima;
  for (double activity : {0.44, 0.62, 0.80, 0.98}) {
    const SimKernel kernel{0.0, 0.1, 1.0, activity, 0.5};
    SimGpu gpu(spec, SimTimeMode::virtual_time);
    double least_energy = 0, top_power_w = 0;
    int optimum = 0;
    for (int clock : clocks) {
      gpu.lock_sm_clocks(clock, clock);
      const double before = gpu.true_energy_j();
      const double seconds = gpu.run(kernel);
      const double energy = gpu.true_energy_j() - before;
      if (clock == clocks.front()) top_power_w = energy / seconds;
      if (optimum == 0 || energy < least_energy) least_energy = energy, optimum = clock;
    }
    optima.push_back(static_cast<double>(optimum) / clocks.front());
    std::printf("core activity %.2f: %.0f W at the top clock, optimum %d MHz (%.3f of it)\n", activity,
                top_power_w, optimum, optima.back());
    EXPECT_GE(optimum, spec.voltage_knee_mhz);
  }
  for (std::size_t i = 1; i < optima.size(); ++i) EXPECT_LT(optima[i], optima[i - 1]);
  EXPECT_GT(optima.front() - optima.back(), 0.03);
  EXPECT_LT(optima.front() - optima.back(), 0.14);  // the real set's p10–p90
}

}  // namespace
}  // namespace dvfslab
