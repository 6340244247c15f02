#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "dvfslab/error.hpp"
#include "dvfslab/plan.hpp"

namespace dvfslab {
namespace {

// A made-up GPU: two memory clocks; 300–1500 MHz in 15 MHz steps at the high one,
// 300–900 MHz at the low one; power limit 100–300 W.
ClockTable test_clocks() {
  ClockTable table;
  table.memory_mhz = {1000, 500};
  for (int mhz = 1500; mhz >= 300; mhz -= 15) table.graphics_mhz[1000].push_back(mhz);
  for (int mhz = 900; mhz >= 300; mhz -= 15) table.graphics_mhz[500].push_back(mhz);
  table.default_graphics_mhz = 1200;
  table.default_memory_mhz = 1000;
  return table;
}

PowerLimits test_limits() { return PowerLimits{250.0, 100.0, 300.0, 250.0}; }

std::vector<Setting> expand(const std::string& knobs_toml) {
  const auto plan = parse_plan_text(
      "[knobs]\n" + knobs_toml + "\n[[cases]]\nworkloads = [\"w\"]\nbatch_sizes = [1]\n", "knobs.toml");
  return expand_settings(plan.knobs, test_clocks(), test_limits(), "Test GPU");
}

std::vector<int> sm_values(const std::vector<Setting>& settings) {
  std::vector<int> out;
  for (const auto& s : settings) out.push_back(s.sm_mhz.value_or(-1));
  return out;
}

std::string config_error_of(const std::string& text) {
  try {
    parse_plan_text(text, "bad.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

const char* const full_plan = R"(
[plan]
name = "demo"
devices = ["sim:v100", "sim:h200"]

[knobs]
sm_mhz = [600, 900, 1200]
power_limit_w = "150:250:50"

[[cases]]
workloads = ["resnet50", "vgg16"]
batch_sizes = [32, 64]
modes = ["train", "infer"]
precisions = "fp16"

[[cases]]
name = "mytrain"
command = ["python3", "train.py", "--batch", "{batch}"]

[measure]
warmup_s = 5
duration_s = 3.5
repetitions = 2
ci_target_pct = 1.5
settle_s = 0.5
cooldown_s = 2
order = "ascending"
seed = 7
drift_every = 4
)";

TEST(PlanParse, ReadsEverySection) {
  const Plan plan = parse_plan_text(full_plan, "demo.toml");
  EXPECT_EQ(plan.name, "demo");
  EXPECT_EQ(plan.devices, (std::vector<std::string>{"sim:v100", "sim:h200"}));
  EXPECT_EQ(plan.knobs.sm_mhz.kind, KnobSpec::Kind::list);
  EXPECT_EQ(plan.knobs.power_limit_w.kind, KnobSpec::Kind::range);
  EXPECT_EQ(plan.knobs.mem_mhz.kind, KnobSpec::Kind::unset);
  ASSERT_EQ(plan.cases.size(), 2u);
  EXPECT_EQ(plan.cases[0].precisions, std::vector<Precision>{Precision::fp16});
  ASSERT_TRUE(plan.cases[1].command.has_value());
  EXPECT_EQ(plan.cases[1].command->argv.back(), "{batch}");
  EXPECT_EQ(plan.cases[1].batch_sizes, std::vector<int>{1});
  EXPECT_EQ(plan.measure.warmup_s, 5.0);
  EXPECT_EQ(plan.measure.duration_s, 3.5);
  EXPECT_EQ(plan.measure.repetitions, 2);
  EXPECT_EQ(plan.measure.max_repetitions, 10);  // a CI target leaves room for more
  EXPECT_EQ(plan.measure.order, Order::ascending);
  EXPECT_EQ(plan.measure.drift_every, 4);
  EXPECT_EQ(plan.source_text, full_plan);

  const auto cases = expand_cases(plan);
  EXPECT_EQ(cases.size(), 2u * 2 * 2 + 1);
  EXPECT_EQ(to_string(cases.front()), "resnet50 train fp16 b32");
  EXPECT_EQ(plan_commands(plan).at(0).name, "mytrain");
}

TEST(PlanParse, MalformedTomlNamesFileLineAndColumn) {
  EXPECT_EQ(config_error_of("[plan]\nname = \"x\n").rfind("bad.toml:2:8: malformed TOML", 0), 0u)
      << config_error_of("[plan]\nname = \"x\n");
  const auto unclosed = config_error_of("[knobs]\nsm_mhz = [1, 2,\n");
  EXPECT_EQ(unclosed.rfind("bad.toml:3:1: malformed TOML", 0), 0u) << unclosed;
  EXPECT_EQ(unclosed.find('\n'), std::string::npos) << "one line, for the command line";
}

TEST(PlanParse, UnknownKeysAreNamedWithTheValidOnes) {
  const auto top = config_error_of("[knob]\nsm_mhz = 1\n");
  EXPECT_NE(top.find("unknown key 'knob' at the top level: valid keys are plan, knobs, cases, measure"),
            std::string::npos)
      << top;
  const auto knob = config_error_of("[knobs]\nsm_mhz = 900\ncore_mhz = 1\n");
  EXPECT_NE(knob.find("bad.toml:3:12: unknown key 'core_mhz' in [knobs]: valid keys are sm_mhz, mem_mhz, "
                      "power_limit_w"),
            std::string::npos)
      << knob;
  const auto measure = config_error_of("[[cases]]\nworkloads=\"w\"\nbatch_sizes=1\n[measure]\nwarmup=3\n");
  EXPECT_NE(measure.find("unknown key 'warmup' in [measure]: valid keys are warmup_iterations, warmup_s"),
            std::string::npos)
      << measure;
}

TEST(PlanParse, BadValuesAreExplained) {
  EXPECT_NE(config_error_of("[knobs]\nsm_mhz = \"fast\"\n").find("\"start:stop:step\""), std::string::npos);
  EXPECT_NE(config_error_of("[knobs]\npower_limit_w = \"all\"\n").find("power limits are continuous"),
            std::string::npos);
  EXPECT_NE(config_error_of("[[cases]]\nworkloads = \"w\"\n").find("needs 'batch_sizes'"), std::string::npos);
  EXPECT_NE(config_error_of("[[cases]]\nworkloads = \"w\"\nbatch_sizes = 1\nmodes = \"serve\"\n")
                .find("unknown mode 'serve'"),
            std::string::npos);
  EXPECT_NE(
      config_error_of("[[cases]]\nworkloads = \"w\"\nbatch_sizes = 1\n[measure]\norder = \"shuffled\"\n")
          .find("choose random or ascending"),
      std::string::npos);
  EXPECT_NE(config_error_of("[plan]\nname = \"x\"\n").find("the plan has no cases"), std::string::npos);
}

TEST(PlanKnobs, ListsMustBeSupportedAndNameTheNearest) {
  EXPECT_EQ(sm_values(expand("sm_mhz = [600, 1200]")), (std::vector<int>{600, 1200}));
  try {
    expand("sm_mhz = [1005, 1207]");
    FAIL() << "1207 MHz was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "knobs.toml:2:10: SM clock 1207 MHz is not supported by Test GPU at memory "
                  "1000 MHz: nearest supported are 1200 and 1215 MHz"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(expand("sm_mhz = 1600"), ConfigError);
  EXPECT_THROW(expand("mem_mhz = 800"), ConfigError);
}

TEST(PlanKnobs, RangesSnapAndSpreadsCoverTheRange) {
  EXPECT_EQ(sm_values(expand("sm_mhz = \"1000:1100:50\"")), (std::vector<int>{1005, 1050, 1095}));
  EXPECT_EQ(sm_values(expand("sm_mhz = { count = 5 }")), (std::vector<int>{300, 600, 900, 1200, 1500}));
  EXPECT_EQ(sm_values(expand("sm_mhz = { count = 3, min = 600, max = 1400 }")),
            (std::vector<int>{600, 1005, 1395}));
  EXPECT_EQ(sm_values(expand("sm_mhz = { every = 20 }")), (std::vector<int>{300, 600, 900, 1200, 1500}));
  EXPECT_EQ(expand("sm_mhz = \"all\"").size(), 81u);
  EXPECT_EQ(expand("sm_mhz = { min = 1400 }").size(), 7u);
}

TEST(PlanKnobs, MemoryClocksUseTheirOwnGraphicsClocks) {
  const auto settings = expand("mem_mhz = \"all\"\nsm_mhz = { count = 2 }");
  std::vector<std::pair<int, int>> pairs;
  for (const auto& s : settings) pairs.emplace_back(*s.mem_mhz, *s.sm_mhz);
  EXPECT_EQ(pairs, (std::vector<std::pair<int, int>>{{500, 300}, {1000, 300}, {500, 900}, {1000, 1500}}));
  EXPECT_THROW(expand("mem_mhz = 500\nsm_mhz = 1200"), ConfigError);
}

TEST(PlanKnobs, PowerLimitsStayInRange) {
  const auto settings = expand("power_limit_w = { count = 3 }");
  ASSERT_EQ(settings.size(), 3u);
  EXPECT_EQ(settings[0].power_limit_w, 100);
  EXPECT_EQ(settings[2].power_limit_w, 300);
  try {
    expand("power_limit_w = [200, 350]");
    FAIL() << "350 W was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("power limit 350 W is outside Test GPU's range 100–300 W"),
              std::string::npos)
        << e.what();
  }
}

Plan schedule_plan(const std::string& measure) {
  return parse_plan_text(
      "[knobs]\nsm_mhz = { count = 5 }\n[[cases]]\nworkloads = [\"a\", \"b\"]\nbatch_sizes = [1, 2]\n"
      "[measure]\n" +
          measure,
      "schedule.toml");
}

std::vector<Setting> five_settings(const Plan& plan) {
  return expand_settings(plan.knobs, test_clocks(), test_limits(), "Test GPU");
}

TEST(PlanSchedule, DefaultPerCaseAndDriftAtStartEndAndEveryK) {
  const Plan plan = schedule_plan("drift_every = 7\n");
  const auto schedule = make_schedule(plan, five_settings(plan));
  EXPECT_EQ(schedule.grid_points, 4u * 6);   // 4 cases × (default + 5 clocks)
  EXPECT_EQ(schedule.drift_points, 2u + 3);  // start, end, after grid points 7, 14, 21
  EXPECT_EQ(schedule.points.front().role, PointRole::drift);
  EXPECT_EQ(schedule.points.back().role, PointRole::drift);
  EXPECT_EQ(schedule.points[8].role, PointRole::drift);
  for (const auto& p : schedule.points) {
    if (p.role == PointRole::drift) {
      EXPECT_TRUE(p.setting.is_default() && p.workload_case.workload == "a");
    }
  }
  EXPECT_TRUE(schedule.changes_clocks());
}

TEST(PlanSchedule, RandomOrderDependsOnlyOnTheSeed) {
  const Plan seeded = schedule_plan("seed = 3\ndrift_check = false\n");
  const auto first = make_schedule(seeded, five_settings(seeded));
  const auto again = make_schedule(seeded, five_settings(seeded));
  const Plan other = schedule_plan("seed = 4\ndrift_check = false\n");
  const auto reordered = make_schedule(other, five_settings(other));
  const Plan sorted = schedule_plan("order = \"ascending\"\ndrift_check = false\n");
  const auto ascending = make_schedule(sorted, five_settings(sorted));
  const auto settings_of = [](const Schedule& s) {
    std::vector<Setting> out;
    for (const auto& p : s.points) out.push_back(p.setting);
    return out;
  };
  EXPECT_EQ(settings_of(first), settings_of(again));
  EXPECT_NE(settings_of(first), settings_of(reordered));
  EXPECT_NE(settings_of(first), settings_of(ascending));
  // Cases stay grouped: each case's points are contiguous.
  for (std::size_t i = 0; i < first.points.size(); ++i) {
    EXPECT_EQ(first.points[i].workload_case, ascending.points[i].workload_case);
  }
  const auto ascending_settings = settings_of(ascending);
  EXPECT_TRUE(std::is_sorted(ascending_settings.begin(), ascending_settings.begin() + 6));
}

TEST(PlanSchedule, ShardsPartitionTheGrid) {
  const Plan plan = schedule_plan("drift_check = false\n");
  const auto settings = five_settings(plan);
  std::multiset<std::pair<Case, Setting>> whole, merged;
  for (const auto& p : make_schedule(plan, settings).points) whole.emplace(p.workload_case, p.setting);
  for (int i = 1; i <= 3; ++i) {
    const auto shard = make_schedule(plan, settings, parse_shard(std::to_string(i) + "/3"));
    EXPECT_EQ(shard.grid_points, 8u);
    for (const auto& p : shard.points) merged.emplace(p.workload_case, p.setting);
  }
  EXPECT_EQ(whole, merged);
  EXPECT_THROW(parse_shard("0/3"), UsageError);
  EXPECT_THROW(parse_shard("4/3"), UsageError);
  EXPECT_THROW(parse_shard("2of3"), UsageError);
}

TEST(PlanSchedule, DefaultOnlyPlanChangesNoClock) {
  const Plan plan = parse_plan_text("[[cases]]\nworkloads = \"a\"\nbatch_sizes = [1, 2]\n", "default.toml");
  const auto schedule =
      make_schedule(plan, expand_settings(plan.knobs, test_clocks(), test_limits(), "Test GPU"));
  EXPECT_EQ(schedule.grid_points, 2u);
  EXPECT_FALSE(schedule.changes_clocks());
  const Plan nothing = parse_plan_text(
      "[[cases]]\nworkloads = \"a\"\nbatch_sizes = 1\n[measure]\n"
      "include_default = false\n",
      "nothing.toml");
  EXPECT_THROW(make_schedule(nothing, {}), ConfigError);
}

TEST(PlanSchedule, EstimateCountsSettleWindowsAndRepetitions) {
  const Plan plan = parse_plan_text(
      "[knobs]\nsm_mhz = [600, 900]\n[[cases]]\nworkloads = \"a\"\nbatch_sizes = 1\n[measure]\n"
      "order = \"ascending\"\ndrift_check = false\nwarmup_s = 1\nsettle_s = 2\nrepetitions = "
      "2\nmax_repetitions = 5\n",
      "estimate.toml");
  const auto schedule = make_schedule(plan, five_settings(plan));
  // default (no settle) + 600 + 900 (settle each): 3 × (1 s warm-up + 2 × 2 s) + 2 × 2 s.
  const auto estimate = estimate_duration(schedule, plan.measure, 0.05);
  EXPECT_DOUBLE_EQ(estimate.typical_s, 3 * (1 + 2 * 2.0) + 2 * 2.0);
  EXPECT_DOUBLE_EQ(estimate.worst_s, 3 * (1 + 5 * 2.0) + 2 * 2.0);
  EXPECT_EQ(format_duration(3725), "1 h 02 min");
  EXPECT_EQ(format_duration(125), "2 min 05 s");
  EXPECT_EQ(format_duration(9.4), "9 s");
}

TEST(PlanPolicy, DefaultWindowIsTwoSecondsOrTwentySensorPeriods) {
  MeasurePolicy policy;
  EXPECT_DOUBLE_EQ(policy.resolved_duration_s(0.05), 2.0);
  EXPECT_DOUBLE_EQ(policy.resolved_duration_s(0.25), 5.0);
  policy.duration_s = 1.0;
  EXPECT_DOUBLE_EQ(policy.resolved_duration_s(0.25), 1.0);
}

TEST(PlanExample, TheDocumentedExampleParses) {
  const Plan plan = load_plan_file(std::string(DVFSLAB_DOCS_DIR) + "/plan-example.toml");
  EXPECT_FALSE(expand_cases(plan).empty());
  EXPECT_NO_THROW(expand_settings(plan.knobs, test_clocks(), test_limits(), "Test GPU"));
}

}  // namespace
}  // namespace dvfslab
