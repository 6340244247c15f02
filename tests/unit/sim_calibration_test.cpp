// The built-in simulated GPUs against the published sweeps and the H200's own
// readings, within issue 14's tolerances (docs/simulation.md#calibration; the
// full table is bench/sim_calibration's output in docs/results/sim_calibration.txt).
#include <gtest/gtest.h>

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
  // 6 families × 3 curve statistics, the dense V100-SXM2 family's optimum, 2 memory
  // ratios, 12 H200 cases × 2; its slowdown and low-clock power are known gaps.
  EXPECT_EQ(checked, 6 * 3 + 1 + 2 + 24);
  EXPECT_EQ(known_gaps, 2);
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

}  // namespace
}  // namespace dvfslab
