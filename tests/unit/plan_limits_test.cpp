// Hostile plan values (issue 11, items 5, 6, 9, 10): deep nesting, non-finite and
// out-of-range numbers, integers beyond int, and grids too large to build must all
// be one ConfigError naming the place, never a crash, a hang or a wrapped value.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "dvfslab/checked_narrow.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/plan.hpp"
#include "sweep/plan_limits.hpp"

namespace dvfslab {
namespace {

const std::string one_case = "[[cases]]\nworkloads = [\"w\"]\nbatch_sizes = [1]\n";

// The ConfigError text of parsing `text`, or "(accepted)".
std::string error_of(const std::string& text) {
  try {
    parse_plan_text(text, "hostile.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(accepted)";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// 300–1500 MHz in 15 MHz steps at one memory clock; power limit 100–300 W.
ClockTable small_clocks() {
  ClockTable table;
  table.memory_mhz = {1000};
  for (int mhz = 1500; mhz >= 300; mhz -= 15) table.graphics_mhz[1000].push_back(mhz);
  table.default_graphics_mhz = 1200;
  table.default_memory_mhz = 1000;
  return table;
}

std::vector<Setting> expand_knobs(const std::string& knobs) {
  const Plan plan = parse_plan_text("[knobs]\n" + knobs + "\n" + one_case, "knobs.toml");
  return expand_settings(plan.knobs, small_clocks(), PowerLimits{250.0, 100.0, 300.0, 250.0}, "Test GPU");
}

std::string expand_error_of(const std::string& knobs) {
  try {
    expand_knobs(knobs);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(PlanNesting, TenThousandNestedArraysAreRefusedWithTheLineNotASegfault) {
  const std::string plan =
      one_case + "[knobs]\nsm_mhz = " + std::string(10'000, '[') + "1" + std::string(10'000, ']') + "\n";
  const std::string error = error_of(plan);
  EXPECT_TRUE(contains(error, "hostile.toml:5:42: arrays or inline tables nested deeper than 32 levels"))
      << error;
}

TEST(PlanNesting, DeeplyNestedInlineTablesAreRefusedNotASegfault) {
  std::string value = "1";
  for (int level = 0; level < 10'000; ++level) value = "{ a = " + value + " }";
  const std::string error = error_of("[plan]\nname = \"x\"\nx = " + value + "\n");
  EXPECT_TRUE(contains(error, "hostile.toml:3:")) << error;
  EXPECT_TRUE(contains(error, "nested deeper than 32 levels")) << error;
}

TEST(PlanNesting, TenThousandPartDottedKeyIsRefusedNotAMinuteOfParsing) {
  std::string key = "a";
  for (int part = 1; part < 10'000; ++part) key += ".a";
  const std::string error = error_of("[plan]\nname = \"x\"\n" + key + " = 1\n" + one_case);
  EXPECT_TRUE(contains(error, "hostile.toml:3:64: a dotted key of more than 32 parts")) << error;
  EXPECT_TRUE(
      contains(error_of("[" + key + "]\n" + one_case), "hostile.toml:1:65: a dotted key of more than 32"));
  EXPECT_TRUE(contains(error_of("x = { " + key + " = 1 }\n"), "a dotted key of more than 32 parts"));
  // Dots in values, strings and comments are not key parts.
  key.resize(80);
  EXPECT_EQ(parse_plan_text("# " + key + "\n[plan]\nname = \"" + key + "\"\n" + one_case +
                                "[measure]\nduration_s = 2.5\n",
                            "dots.toml")
                .measure.duration_s,
            2.5);
  EXPECT_TRUE(contains(error_of("[plan]\n\"" + key + "\" = 1\n" + one_case), "unknown key"));
}

TEST(PlanNesting, UnclosedBracketsAreRefusedBeforeToml) {
  EXPECT_TRUE(contains(error_of("a = " + std::string(5'000, '[')), "nested deeper than 32 levels"));
  EXPECT_TRUE(contains(error_of("a = " + std::string(5'000, '{')), "nested deeper than 32 levels"));
}

TEST(PlanNesting, BracketsInStringsAndCommentsDoNotCount) {
  const std::string brackets(100, '[');
  const std::string plan = "# " + brackets + "\n[plan]\nname = \"" + brackets + "\"\ndescription = '''\n" +
                           brackets + "\n'''\n" + one_case;
  EXPECT_EQ(parse_plan_text(plan, "strings.toml").name, brackets);
}

TEST(PlanNesting, ThirtyTwoLevelsReachToml) {
  const std::string nested = std::string(32, '[') + "1" + std::string(32, ']');
  // Past the nesting check, toml11 parses it and the plan refuses the type.
  EXPECT_TRUE(contains(error_of("[knobs]\nsm_mhz = " + nested + "\n" + one_case), "must be an integer"));
}

TEST(PlanText, LongLinesAreRefusedNotMinutesOfParsing) {
  // toml11 scans the whole line for every value on it: 5000 values took a minute.
  std::string values = "1";
  for (int i = 1; i < 5'000; ++i) values += ", 1";
  const std::string error = error_of("[plan]\nname = \"x\"\ndescription = [" + values + "]\n" + one_case);
  EXPECT_TRUE(contains(error, "hostile.toml:3: the line is 15014 bytes long, more than 4096")) << error;
  std::string multi_line = "1";
  for (int i = 1; i < 1'000; ++i) multi_line += (i % 100 == 0 ? ",\n" : ", ") + std::to_string(i + 1);
  EXPECT_EQ(parse_plan_text("[[cases]]\nworkloads = [\"w\"]\nbatch_sizes = [" + multi_line + "]\n", "ok.toml")
                .cases.front()
                .batch_sizes.size(),
            1000u);
}

TEST(PlanValues, SeedBeyondTwoToThe53IsRefusedNotSaturated) {
  // toml11 reads 99999999999999999999 as 2^63 - 1 without a word.
  EXPECT_TRUE(contains(
      error_of(one_case + "[measure]\nseed = 99999999999999999999\n"),
      "'seed' = 9223372036854775807 is outside its range: give an integer from 0 to 9007199254740992"));
  EXPECT_EQ(parse_plan_text(one_case + "[measure]\nseed = 9007199254740992\n", "ok.toml").measure.seed,
            9007199254740992u);
}

TEST(PlanUtf8, InvalidUtf8IsRefusedWithItsPlace) {
  const std::string error = error_of("[plan]\nname = \"caf\xE9\"\n" + one_case);
  EXPECT_TRUE(contains(error, "hostile.toml:2:12: byte 0xE9 is not valid UTF-8")) << error;
  EXPECT_TRUE(contains(error_of("# \xED\xA0\x80 surrogate\n" + one_case), "not valid UTF-8"));
  EXPECT_TRUE(contains(error_of("# \xC0\xAF overlong\n" + one_case), "not valid UTF-8"));
  EXPECT_EQ(
      parse_plan_text("[plan]\nname = \"Gr\xC3\xBC\xC3\x9F \xE2\x9C\x93\"\n" + one_case, "ok.toml").name,
      "Gr\xC3\xBC\xC3\x9F \xE2\x9C\x93");
}

TEST(PlanValues, InfiniteWaitsAreRefusedNotAHang) {
  for (const std::string key : {"duration_s", "settle_s", "cooldown_s", "warmup_s"}) {
    for (const std::string value : {"inf", "+inf", "-inf", "nan", "1e308", "3600.5"}) {
      SCOPED_TRACE(key + " = " + value);
      const std::string error = error_of(one_case + "[measure]\n" + key + " = " + value + "\n");
      EXPECT_TRUE(contains(error, "hostile.toml:5:")) << error;
      EXPECT_TRUE(contains(error, "'" + key + "' = ")) << error;
      EXPECT_TRUE(contains(error, "is outside its range")) << error;
    }
  }
  EXPECT_EQ(*parse_plan_text(one_case + "[measure]\nduration_s = 3600\n", "ok.toml").measure.duration_s,
            3600.0);
}

TEST(PlanValues, NanDurationIsRefusedNotMeasured) {
  EXPECT_TRUE(contains(error_of(one_case + "[measure]\nduration_s = nan\n"),
                       "'duration_s' = nan is outside its range"));
  EXPECT_TRUE(contains(error_of(one_case + "[measure]\nci_target_pct = nan\n"), "'ci_target_pct' = nan"));
  EXPECT_TRUE(contains(error_of(one_case + "[measure]\nduration_s = 0\n"), "give a number above 0"));
}

TEST(PlanValues, HugeWarmupIterationsAreRefusedNotAHang) {
  const std::string error = error_of(one_case + "[measure]\nwarmup_iterations = 9223372036854775807\n");
  EXPECT_TRUE(
      contains(error,
               "'warmup_iterations' = 9223372036854775807 is outside its range: give an integer from 0 "
               "to 1000000"))
      << error;
  EXPECT_TRUE(contains(error_of(one_case + "[measure]\nrepetitions = 1001\n"), "from 1 to 1000"));
  EXPECT_TRUE(contains(error_of(one_case + "[measure]\nmax_repetitions = 4294967297\n"), "from 1 to 1000"));
}

TEST(PlanValues, DryRunEstimateIsNeverNegative) {
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), format_duration(1e15));
  EXPECT_EQ(format_duration(std::numeric_limits<double>::quiet_NaN()), "0 s");
  EXPECT_EQ(format_duration(-5), "0 s");
  // The largest plan values still estimate a finite, positive time.
  const Plan plan = parse_plan_text("[knobs]\nsm_mhz = \"all\"\n" + one_case +
                                        "[measure]\nduration_s = 3600\nsettle_s = 3600\ncooldown_s = 3600\n"
                                        "warmup_s = 3600\nrepetitions = 1000\n",
                                    "slow.toml");
  const auto schedule =
      make_schedule(plan, expand_settings(plan.knobs, small_clocks(), PowerLimits{}, "Test GPU"));
  const auto estimate = estimate_duration(schedule, plan.measure, 0.1);
  EXPECT_GT(estimate.typical_s, 0);
  EXPECT_EQ(format_duration(estimate.typical_s).find('-'), std::string::npos);
}

TEST(PlanIntegers, ValuesBeyondIntAreRefusedNotWrapped) {
  const std::vector<std::pair<std::string, std::string>> wrapped = {
      {"[knobs]\nsm_mhz = [4294968676]\n", "'sm_mhz' = 4294968676 is outside its range"},
      {"[knobs]\npower_limit_w = [4294967496]\n", "'power_limit_w' = 4294967496 is outside its range"},
      {"[knobs]\nsm_mhz = [9223372036854775807]\n", "'sm_mhz' = 9223372036854775807"},
      {"[knobs]\nmem_mhz = { count = 4294967298 }\n", "'count' = 4294967298"},
      {"[knobs]\nsm_mhz = { min = -4294967295 }\n", "'min' = -4294967295"},
      {"[measure]\ndrift_every = 4294967297\n", "'drift_every' = 4294967297"},
  };
  for (const auto& [text, expected] : wrapped) {
    SCOPED_TRACE(text);
    const std::string error = error_of(text + one_case);
    EXPECT_TRUE(contains(error, "hostile.toml:2:")) << error;
    EXPECT_TRUE(contains(error, expected)) << error;
  }
  for (const std::string batch : {"4294967297", "2147483648", "0", "-1", "1000001"}) {
    const std::string error = error_of("[[cases]]\nworkloads = [\"w\"]\nbatch_sizes = [" + batch + "]\n");
    EXPECT_TRUE(contains(
        error, "'batch_sizes' = " + batch + " is outside its range: give an integer from 1 to 1000000"))
        << error;
  }
}

TEST(PlanIntegers, CheckedNarrowRefusesWhatTheTargetCannotHold) {
  EXPECT_EQ(checked_narrow<int>(std::int64_t{4294968676}), std::nullopt);
  EXPECT_EQ(checked_narrow<int>(std::int64_t{-2147483649}), std::nullopt);
  EXPECT_EQ(checked_narrow<int>(std::int64_t{2147483647}), 2147483647);
  EXPECT_EQ(checked_narrow<unsigned>(-1), std::nullopt);
  EXPECT_EQ(checked_narrow<std::int64_t>(std::numeric_limits<std::uint64_t>::max()), std::nullopt);
}

TEST(PlanGrid, HugeClockRangeIsRefusedBeforeExpandingNotBadAlloc) {
  EXPECT_TRUE(contains(error_of("[knobs]\nsm_mhz = \"1:2147483647:1\"\n" + one_case),
                       "2147483647 is outside 1–100000"));
  EXPECT_TRUE(
      contains(error_of("[knobs]\nsm_mhz = \"1:99999999999999999999:1\"\n" + one_case), "is not understood"));
  EXPECT_TRUE(
      contains(expand_error_of("sm_mhz = \"2000:3000:10\""),
               "SM clock range 2000–3000 MHz lies outside the clocks Test GPU at memory 1000 MHz supports "
               "(300–1500 MHz)"));
  // The widest range allowed still expands quickly to the supported clocks.
  EXPECT_EQ(expand_knobs("sm_mhz = \"1:100000:1\"").size(), 81u);
}

TEST(PlanGrid, HugePowerRangeIsRefusedBeforeExpandingNotBadAlloc) {
  EXPECT_TRUE(contains(error_of("[knobs]\npower_limit_w = \"100:2147483647:1\"\n" + one_case),
                       "2147483647 is outside 1–100000"));
  EXPECT_TRUE(contains(expand_error_of("power_limit_w = \"100:100000:1\""),
                       "power limit range 100–100000 W goes outside Test GPU's range 100–300 W"));
}

TEST(PlanGrid, EnormousCaseGridIsRefusedWithTheCountNotBadAlloc) {
  std::string workloads, batches;
  for (int i = 0; i < 1000; ++i) {
    const std::string separator = i == 0 ? "" : i % 100 == 0 ? ",\n" : ", ";
    workloads += separator + "\"w" + std::to_string(i) + "\"";
    batches += separator + std::to_string(i + 1);
  }
  const Plan plan = parse_plan_text("[[cases]]\nworkloads = [" + workloads + "]\nbatch_sizes = [" + batches +
                                        "]\nmodes = [\"train\", \"infer\"]\n",
                                    "grid.toml");
  try {
    make_schedule(plan, {});
    FAIL() << "a grid of 2000000 cases was accepted";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(contains(e.what(), "grid.toml: the plan's grid has 2000000 points")) << e.what();
    EXPECT_TRUE(contains(e.what(), "more than the 100000 a plan may hold")) << e.what();
  }
}

TEST(PlanGrid, CasesTimesSettingsBeyondTheLimitAreRefusedWithTheCount) {
  std::string batches;
  for (int i = 1; i <= 2000; ++i) batches += (i == 1 ? "" : i % 100 == 0 ? ",\n" : ", ") + std::to_string(i);
  const Plan plan = parse_plan_text(
      "[knobs]\nsm_mhz = \"all\"\n[[cases]]\nworkloads = [\"w\"]\nbatch_sizes = [" + batches + "]\n",
      "grid.toml");
  try {
    make_schedule(plan, expand_settings(plan.knobs, small_clocks(), PowerLimits{}, "Test GPU"));
    FAIL() << "2000 cases × 82 settings were accepted";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(contains(e.what(), "164000 points (2000 cases × 82 settings)")) << e.what();
  }
}

TEST(PlanPrograms, MissingCommandProgramIsAPlanErrorWithItsPlace) {
  const Plan plan = parse_plan_text(
      "[[cases]]\nname = \"train\"\ncommand = [\"dvfslab-no-such-program\", \"x\"]\n", "commands.toml");
  try {
    check_plan_programs(plan);
    FAIL() << "a missing program was accepted";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(contains(e.what(),
                         "commands.toml:3:11: the program 'dvfslab-no-such-program' of command case 'train' "
                         "is not found"))
        << e.what();
    EXPECT_EQ(e.code(), ExitCode::config);
  }
  EXPECT_NO_THROW(
      check_plan_programs(parse_plan_text("[[cases]]\nname = \"t\"\ncommand = [\"sh\"]\n", "ok.toml")));
  EXPECT_NO_THROW(
      check_plan_programs(parse_plan_text("[[cases]]\nname = \"t\"\ncommand = [\"/bin/sh\"]\n", "ok.toml")));
  EXPECT_THROW(check_plan_programs(
                   parse_plan_text("[[cases]]\nname = \"t\"\ncommand = [\"/etc/passwd\"]\n", "x.toml")),
               ConfigError);
}

}  // namespace
}  // namespace dvfslab
