#include <gtest/gtest.h>

#include <string>

#include "dvfslab/plan.hpp"

namespace dvfslab {
namespace {

void expect_same_knob(const KnobSpec& a, const KnobSpec& b, const char* knob) {
  SCOPED_TRACE(knob);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.stop, b.stop);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.min, b.min);
  EXPECT_EQ(a.max, b.max);
}

// Every field a plan file sets; the source and the knobs' locations differ by design.
void expect_same_plan(const Plan& a, const Plan& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.description, b.description);
  EXPECT_EQ(a.devices, b.devices);
  expect_same_knob(a.knobs.sm_mhz, b.knobs.sm_mhz, "sm_mhz");
  expect_same_knob(a.knobs.mem_mhz, b.knobs.mem_mhz, "mem_mhz");
  expect_same_knob(a.knobs.power_limit_w, b.knobs.power_limit_w, "power_limit_w");
  ASSERT_EQ(a.cases.size(), b.cases.size());
  for (std::size_t i = 0; i < a.cases.size(); ++i) {
    const CaseSpec& x = a.cases[i];
    const CaseSpec& y = b.cases[i];
    EXPECT_EQ(x.workloads, y.workloads);
    ASSERT_EQ(x.command.has_value(), y.command.has_value());
    if (x.command) {
      EXPECT_EQ(x.command->name, y.command->name);
      EXPECT_EQ(x.command->argv, y.command->argv);
    }
    EXPECT_EQ(x.batch_sizes, y.batch_sizes);
    EXPECT_EQ(x.modes, y.modes);
    EXPECT_EQ(x.precisions, y.precisions);
  }
  const MeasurePolicy& m = a.measure;
  const MeasurePolicy& n = b.measure;
  EXPECT_EQ(m.warmup_iterations, n.warmup_iterations);
  EXPECT_EQ(m.warmup_s, n.warmup_s);
  EXPECT_EQ(m.duration_s, n.duration_s);
  EXPECT_EQ(m.repetitions, n.repetitions);
  EXPECT_EQ(m.max_repetitions, n.max_repetitions);
  EXPECT_EQ(m.ci_target_pct, n.ci_target_pct);
  EXPECT_EQ(m.settle_s, n.settle_s);
  EXPECT_EQ(m.cooldown_s, n.cooldown_s);
  EXPECT_EQ(m.order, n.order);
  EXPECT_EQ(m.seed, n.seed);
  EXPECT_EQ(m.include_default, n.include_default);
  EXPECT_EQ(m.drift_check, n.drift_check);
  EXPECT_EQ(m.drift_every, n.drift_every);
}

const char* const every_field_plan = R"([plan]
name = "every field"
description = "a \"quoted\" description"
devices = ["sim:v100", "sim:a100"]

[knobs]
sm_mhz = { every = 3, min = 600, max = 1400 }
mem_mhz = "500:1000:250"
power_limit_w = { count = 4, max = 280 }

[[cases]]
workloads = ["resnet50", "bert"]
batch_sizes = [32, 64]
modes = ["train", "infer"]
precisions = ["fp32", "fp16"]

[[cases]]
name = "my job"
command = ["python3", "train.py", "--tab\tand\nnewline"]

[measure]
warmup_s = 2.5
duration_s = 3
repetitions = 2
max_repetitions = 6
ci_target_pct = 1.5
settle_s = 0.5
cooldown_s = 2
order = "ascending"
seed = 99
include_default = false
drift_check = false
drift_every = 10
)";

TEST(PlanToml, APlanWrittenAsTomlParsesBackIntoTheSamePlan) {
  const Plan plan = parse_plan_text(every_field_plan, "every.toml");
  const Plan again = parse_plan_text(to_toml(plan), "again.toml");
  expect_same_plan(plan, again);
  EXPECT_EQ(to_toml(again), to_toml(plan));
}

TEST(PlanToml, DefaultsListsAndAllRoundTrip) {
  const Plan plan = parse_plan_text(
      "[knobs]\nsm_mhz = \"all\"\nmem_mhz = [877, 1215]\npower_limit_w = { count = 3 }\n"
      "[[cases]]\nworkloads = [\"w\"]\nbatch_sizes = [1]\n",
      "defaults.toml");
  expect_same_plan(plan, parse_plan_text(to_toml(plan), "again.toml"));
}

TEST(PlanToml, ControlCharactersInNamesAreEscapedSoTheTextStaysOneValuePerLine) {
  Plan plan = parse_plan_text("[[cases]]\nworkloads = [\"w\"]\nbatch_sizes = [1]\n", "p.toml");
  plan.name = "line one\nline two\x01\x7f \"q\" \\";
  const std::string text = to_toml(plan);
  EXPECT_NE(text.find(R"(name = "line one\u000aline two\u0001\u007f \"q\" \\")"), std::string::npos) << text;
  EXPECT_EQ(parse_plan_text(text, "again.toml").name, plan.name);
}

TEST(PlanToml, AWholeNumberIsWrittenAsATomlFloat) {
  EXPECT_EQ(toml_float(3), "3.0");
  EXPECT_EQ(toml_float(0.25), "0.25");
}

}  // namespace
}  // namespace dvfslab
