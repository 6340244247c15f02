#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dvfslab/gpu.hpp"
#include "dvfslab/gpu_json.hpp"
#include "dvfslab/gpu_summary.hpp"

namespace dvfslab {
namespace {

std::vector<int> evenly_spaced(int low, int high, int step) {
  std::vector<int> clocks;
  for (int mhz = high; mhz >= low; mhz -= step) clocks.push_back(mhz);
  return clocks;
}

TEST(ClockList, EvenlySpacedClocksBecomeARange) {
  EXPECT_EQ(format_clock_list(evenly_spaced(345, 1980, 15)), "345–1980 MHz, step 15 (110 clocks)");
}

TEST(ClockList, AlternatingRoundedStepsBecomeAnApproximateRange) {
  // The V100 lists 1380, 1372, 1365, 1357, ...: 7.5 MHz rounded to 8 and 7.
  std::vector<int> clocks;
  for (int i = 0; i <= 166; ++i) clocks.push_back(1380 - static_cast<int>(i * 7.5 + 0.5));
  EXPECT_EQ(format_clock_list(clocks), "135–1380 MHz, step ≈7.5 (167 clocks)");
}

TEST(ClockList, IrregularOrShortListsAreListedDescending) {
  EXPECT_EQ(format_clock_list({2201, 3201}), "3201, 2201 MHz");
  EXPECT_EQ(format_clock_list({1380, 1372, 1350}), "1380, 1372, 1350 MHz");
  EXPECT_EQ(format_clock_list({}), "none reported");
}

TEST(GpuJson, AbsentReadingsAreNullAndReasonsAreNamed) {
  Telemetry telemetry;
  telemetry.time_s = 2.5;
  telemetry.power_instant_w = 123.5;
  telemetry.throttle_reasons = throttle::sw_power_cap | throttle::gpu_idle;
  const nlohmann::json json = telemetry;
  EXPECT_EQ(json["time_s"], 2.5);
  EXPECT_EQ(json["power_instant_w"], 123.5);
  EXPECT_TRUE(json["energy_j"].is_null());
  EXPECT_TRUE(json["memory_temperature_c"].is_null());
  EXPECT_EQ(json["throttle_reasons"], nlohmann::json({"gpu_idle", "sw_power_cap"}));
  EXPECT_EQ(json.size(), 11u) << "every Telemetry field is present";
}

TEST(GpuJson, ClockTableKeysGraphicsClocksByMemoryClock) {
  ClockTable table;
  table.memory_mhz = {877};
  table.graphics_mhz[877] = {1380, 1372};
  table.default_graphics_mhz = 1245;
  const nlohmann::json json = table;
  EXPECT_EQ(json["graphics_mhz"]["877"], nlohmann::json({1380, 1372}));
  EXPECT_EQ(json["default_applications"]["graphics_mhz"], 1245);
  EXPECT_TRUE(json["default_applications"]["memory_mhz"].is_null());
}

TEST(GpuJson, SimulatedH200DescribesItselfAsSimulated) {
  auto gpu = open_gpu("sim:h200");
  const nlohmann::json device = describe_gpu(*gpu);
  EXPECT_EQ(device["simulated"], true);
  EXPECT_EQ(device["backend"], "sim");
  EXPECT_EQ(device["clocks"]["memory_mhz"], nlohmann::json({3201, 2201}));
  EXPECT_EQ(device["clocks"]["graphics_mhz"]["2201"].size(), 110u);
  EXPECT_EQ(device["power_limit_w"]["max"], 700.0);
  EXPECT_TRUE(device["telemetry"].contains("throttle_reasons"));
  const std::string text = describe_gpu_text(*gpu);
  EXPECT_NE(text.find("SIMULATED"), std::string::npos) << text;
  EXPECT_NE(text.find("345–1980 MHz, step 15 (110 clocks)"), std::string::npos) << text;
}

}  // namespace
}  // namespace dvfslab
