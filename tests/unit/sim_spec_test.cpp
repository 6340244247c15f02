// The simulated GPUs' facts: clock tables, default clocks and power limits as the
// spec files cite them.
#include <gtest/gtest.h>

#include <algorithm>

#include "dvfslab/error.hpp"
#include "dvfslab/sim_gpu.hpp"

namespace dvfslab {
namespace {

void expect_evenly_stepped(const std::vector<int>& clocks, int highest, int lowest, int step) {
  ASSERT_FALSE(clocks.empty());
  EXPECT_EQ(clocks.front(), highest);
  EXPECT_EQ(clocks.back(), lowest);
  for (std::size_t i = 1; i < clocks.size(); ++i)
    EXPECT_EQ(clocks[i - 1] - clocks[i], step) << "at " << clocks[i];
}

TEST(SimSpec, KeysAreEveryModelSorted) {
  EXPECT_EQ(sim_gpu_keys(), (std::vector<std::string>{"a100", "h200", "mi250x", "mi300x", "p100", "rtx2080ti", "v100", "v100sxm2"}));
}

TEST(SimSpec, UnknownKeyNamesTheChoices) {
  try {
    sim_gpu_spec("k80");
    FAIL() << "k80 was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sim:a100, sim:h200, sim:mi250x, sim:mi300x, sim:p100, sim:rtx2080ti, sim:v100, sim:v100sxm2"),
              std::string::npos)
        << e.what();
  }
}

TEST(SimSpec, H200MatchesTheRealBoard) {
  const SimGpuSpec& spec = sim_gpu_spec("h200");
  EXPECT_EQ(spec.name, "NVIDIA H200");
  EXPECT_EQ(spec.memory_mhz, (std::vector<int>{3201, 2201}));
  ASSERT_EQ(spec.graphics_mhz.size(), 2u);
  for (const auto& clocks : spec.graphics_mhz) {
    EXPECT_EQ(clocks.size(), 110u);
    expect_evenly_stepped(clocks, 1980, 345, 15);
  }
  EXPECT_EQ(spec.default_graphics_mhz, 1980);
  EXPECT_EQ(spec.default_memory_mhz, 3201);
  EXPECT_EQ(spec.power_limit_default_w, 700);
  EXPECT_EQ(spec.power_limit_min_w, 200);
  EXPECT_EQ(spec.power_limit_max_w, 700);
  EXPECT_GE(spec.idle_power_w, 75);
  EXPECT_LE(spec.idle_power_w, 125);
}

TEST(SimSpec, V100HoldsTheStudyAndBenchmarkClocks) {
  const SimGpuSpec& spec = sim_gpu_spec("v100");
  EXPECT_EQ(spec.memory_mhz, (std::vector<int>{877}));
  const auto& clocks = spec.graphics_mhz.front();
  EXPECT_EQ(clocks.size(), 167u);
  EXPECT_EQ(clocks.front(), 1380);
  EXPECT_EQ(clocks.back(), 135);
  EXPECT_EQ((std::vector<int>(clocks.begin(), clocks.begin() + 4)),
            (std::vector<int>{1380, 1372, 1365, 1357}));
  // Every clock the NV-DVFS-Benchmark V100 data measured, and the study's range ends.
  for (int measured : {405, 502, 510, 600, 705, 802, 945, 1087, 1102, 1237, 1245, 1380}) {
    EXPECT_NE(std::find(clocks.begin(), clocks.end(), measured), clocks.end()) << measured;
  }
  EXPECT_EQ(spec.default_graphics_mhz, 1245);
  EXPECT_EQ(spec.default_memory_mhz, 877);
  EXPECT_EQ(spec.power_limit_default_w, 250);
  EXPECT_EQ(spec.power_limit_min_w, 100);
  EXPECT_EQ(spec.power_limit_max_w, 250);
  EXPECT_TRUE(spec.has_energy_counter);
  EXPECT_TRUE(spec.has_locked_clocks);
  EXPECT_FALSE(spec.has_memory_locked_clocks);
}

TEST(SimSpec, V100Sxm2HoldsEveryClockOfTheDenseSet) {
  const SimGpuSpec& spec = sim_gpu_spec("v100sxm2");
  EXPECT_EQ(spec.name, "Tesla V100-SXM2-16GB");
  EXPECT_EQ(spec.memory_mhz, (std::vector<int>{877}));
  const auto& clocks = spec.graphics_mhz.front();
  EXPECT_EQ(clocks.size(), 187u);
  EXPECT_EQ(clocks.front(), 1530);
  EXPECT_EQ(clocks.back(), 135);
  // The dense set's 140 clocks: 1530 down to 487 MHz on the 7.5 MHz grid.
  const auto lowest_measured = std::find(clocks.begin(), clocks.end(), 487);
  ASSERT_NE(lowest_measured, clocks.end());
  EXPECT_EQ(lowest_measured - clocks.begin() + 1, 140);
  EXPECT_EQ((std::vector<int>(clocks.begin(), clocks.begin() + 4)), (std::vector<int>{1530, 1522, 1515, 1507}));
  EXPECT_EQ(spec.default_graphics_mhz, 1312);
  EXPECT_EQ(spec.power_limit_default_w, 300);
  EXPECT_EQ(spec.power_limit_min_w, 150);
  EXPECT_EQ(spec.power_limit_max_w, 300);
  // The PCIe board's model constants, the same chip; its voltage curve goes on
  // rising past the PCIe top of 1380 MHz: 0.76 + 0.24 × (680 / 530)^1.5 V at 1530.
  const SimGpuSpec& pcie = sim_gpu_spec("v100");
  EXPECT_EQ(spec.voltage_knee_mhz, pcie.voltage_knee_mhz);
  EXPECT_EQ(spec.voltage_min_v, pcie.voltage_min_v);
  EXPECT_EQ(spec.voltage_curve_exponent, pcie.voltage_curve_exponent);
  EXPECT_NEAR(spec.voltage_max_v, 1.1088, 1e-4);
  EXPECT_EQ(spec.slow_clock_below_mhz, pcie.slow_clock_below_mhz);
  EXPECT_EQ(spec.dynamic_power_coefficient, pcie.dynamic_power_coefficient);
}

TEST(SimSpec, A100MatchesThePublishedQuery) {
  const SimGpuSpec& spec = sim_gpu_spec("a100");
  EXPECT_EQ(spec.memory_mhz, (std::vector<int>{1215}));
  EXPECT_EQ(spec.graphics_mhz.front().size(), 81u);
  expect_evenly_stepped(spec.graphics_mhz.front(), 1410, 210, 15);
  EXPECT_EQ(spec.default_graphics_mhz, 1095);
  EXPECT_EQ(spec.power_limit_default_w, 400);
  EXPECT_EQ(spec.power_limit_min_w, 100);
  EXPECT_EQ(spec.power_limit_max_w, 400);
}

TEST(SimSpec, P100IsPascalWithoutLocksOrEnergyCounter) {
  const SimGpuSpec& spec = sim_gpu_spec("p100");
  EXPECT_EQ(spec.memory_mhz, (std::vector<int>{715}));
  const auto& clocks = spec.graphics_mhz.front();
  EXPECT_EQ(clocks.size(), 62u);
  EXPECT_EQ((std::vector<int>(clocks.begin(), clocks.begin() + 5)),
            (std::vector<int>{1328, 1316, 1303, 1290, 1278}));
  EXPECT_NE(std::find(clocks.begin(), clocks.end(), 1189), clocks.end());
  EXPECT_EQ(spec.default_graphics_mhz, 1189);
  EXPECT_EQ(spec.power_limit_min_w, 125);
  EXPECT_EQ(spec.power_limit_max_w, 250);
  EXPECT_FALSE(spec.has_energy_counter);
  EXPECT_FALSE(spec.has_locked_clocks);
}

TEST(SimSpec, Rtx2080TiHasSeveralMemoryClocks) {
  const SimGpuSpec& spec = sim_gpu_spec("rtx2080ti");
  EXPECT_EQ(spec.memory_mhz, (std::vector<int>{7000, 6800, 5000, 810, 405}));
  expect_evenly_stepped(spec.graphics_mhz_for(7000), 2115, 300, 15);
  EXPECT_EQ(spec.graphics_mhz_for(7000).size(), 122u);
  expect_evenly_stepped(spec.graphics_mhz_for(405), 405, 300, 15);
  EXPECT_EQ(spec.power_limit_default_w, 250);
  EXPECT_EQ(spec.power_limit_min_w, 100);
  EXPECT_EQ(spec.power_limit_max_w, 280);
}

TEST(SimSpec, EverySpecIsConsistent) {
  for (const auto& key : sim_gpu_keys()) {
    SCOPED_TRACE(key);
    const SimGpuSpec& spec = sim_gpu_spec(key);
    ASSERT_EQ(spec.memory_mhz.size(), spec.graphics_mhz.size());
    EXPECT_TRUE(std::is_sorted(spec.memory_mhz.rbegin(), spec.memory_mhz.rend()));
    for (const auto& clocks : spec.graphics_mhz) EXPECT_TRUE(std::is_sorted(clocks.rbegin(), clocks.rend()));
    const auto& defaults = spec.graphics_mhz_for(spec.default_memory_mhz);
    EXPECT_NE(std::find(defaults.begin(), defaults.end(), spec.default_graphics_mhz), defaults.end());
    EXPECT_LE(spec.power_limit_min_w, spec.power_limit_default_w);
    EXPECT_LE(spec.power_limit_default_w, spec.power_limit_max_w);
    EXPECT_LT(spec.idle_power_w, spec.power_limit_min_w);
    EXPECT_LE(spec.voltage_min_v, spec.voltage_max_v);
  }
}

TEST(SimSpec, UnsupportedMemoryClockNamesTheSupportedOnes) {
  try {
    sim_gpu_spec("h200").graphics_mhz_for(2600);
    FAIL() << "2600 MHz was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("3201 MHz, 2201 MHz"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dvfslab
