#include <gtest/gtest.h>

#include "dvfslab/clock.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab {
namespace {

TEST(Types, SettingTextNamesEveryKnob) {
  EXPECT_EQ(to_string(Setting{1380, std::nullopt, 250}), "sm=1380 mem=default pl=250");
  EXPECT_TRUE(Setting{}.is_default());
  EXPECT_FALSE((Setting{std::nullopt, 877, std::nullopt}.is_default()));
}

TEST(Types, ModeAndPrecisionRoundTrip) {
  EXPECT_EQ(parse_mode("train"), Mode::train);
  EXPECT_EQ(parse_mode("infer"), Mode::infer);
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::bf16, Precision::fp16}) {
    EXPECT_EQ(parse_precision(to_string(p)), p);
  }
}

TEST(Types, UnknownPrecisionListsTheChoices) {
  try {
    parse_precision("int8");
    FAIL() << "int8 was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("fp32, tf32, bf16 or fp16"), std::string::npos);
    EXPECT_EQ(e.code(), ExitCode::config);
  }
}

TEST(Types, ThrottleReasonsDecodeKnownAndUnknownBits) {
  const auto names = throttle_reason_names(throttle::sw_power_cap | throttle::hw_thermal_slowdown | 0x10000);
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[0], "sw_power_cap");
  EXPECT_EQ(names[1], "hw_thermal_slowdown");
  EXPECT_EQ(names[2], "unknown_0x10000");
  EXPECT_TRUE(throttle_reason_names(0).empty());
}

// The sweep and the analysis once merged a point's window flags in two copies of
// the same code; now both use this one.
TEST(Types, MergedFlagsKeepEveryFlagAnyWindowRaised) {
  MeasurementFlags point;
  MeasurementFlags first;
  first.short_window = true;
  first.power_throttle = true;
  MeasurementFlags second;
  second.energy_estimated = true;
  second.clock_mismatch = true;
  second.thermal_throttle = true;
  point |= first;
  point |= second;
  point |= MeasurementFlags{};
  EXPECT_EQ(point.names(), (std::vector<std::string>{"short_window", "energy_estimated", "clock_mismatch",
                                                     "thermal_throttle", "power_throttle"}));
  EXPECT_EQ(MeasurementFlags{} |= MeasurementFlags{}, MeasurementFlags{});
}

TEST(VirtualClock, TimersFireInOrderAtTheirDueTimes) {
  VirtualClock clock;
  std::vector<std::pair<char, double>> fired;
  clock.every(0.1, [&](double t) { fired.emplace_back('a', t); });
  clock.every(0.25, [&](double t) { fired.emplace_back('b', t); });
  clock.advance(0.5);
  ASSERT_EQ(fired.size(), 7u);
  EXPECT_EQ(fired[2].first, 'b');
  EXPECT_NEAR(fired[2].second, 0.25, 1e-12);
  EXPECT_NEAR(fired.back().second, 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(clock.now_s(), 0.5);
}

TEST(VirtualClock, CancelledTimerStops) {
  VirtualClock clock;
  int count = 0;
  const auto handle = clock.every(0.1, [&](double) { ++count; });
  clock.advance(0.35);
  clock.cancel(handle);
  clock.advance(1.0);
  EXPECT_EQ(count, 3);
}

TEST(VirtualClock, RejectsNonPositivePeriod) {
  VirtualClock clock;
  EXPECT_THROW(clock.every(0.0, [](double) {}), std::invalid_argument);
}

}  // namespace
}  // namespace dvfslab
