// Semantics of the analysis library on small hand-made inputs: confidence
// intervals, objectives, baselines, ties, Pareto frontiers and aggregates.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

ResultRow row(std::optional<int> sm, double time_s, double power_w, bool is_default = false,
              int repetition = 0, std::string workload = "resnet50", int batch = 64) {
  ResultRow r;
  r.source = "test";
  r.gpu = "Test GPU";
  r.workload_case = {std::move(workload), batch, Mode::train, Precision::fp32};
  r.item_unit = "images";
  r.items_per_iteration = batch;
  r.setting.sm_mhz = sm;
  r.is_default = is_default;
  r.repetition = repetition;
  r.time_per_iteration_s = time_s;
  r.mean_power_w = power_w;
  r.energy_per_iteration_j = time_s * power_w;
  return r;
}

TEST(Statistics, StudentQuantileMatchesTablesAndApproachesNormal) {
  EXPECT_NEAR(student_t_975(1), 12.7062, 1e-4);
  EXPECT_NEAR(student_t_975(4), 2.7764, 1e-4);
  EXPECT_NEAR(student_t_975(31), 2.0395, 2e-4);  // first value past the table
  EXPECT_NEAR(student_t_975(60), 2.0003, 2e-4);
  EXPECT_NEAR(student_t_975(1000), 1.9623, 2e-4);
  EXPECT_THROW(student_t_975(0), Error);
}

TEST(Statistics, EstimateGivesStudentIntervalOnlyWithRepetitions) {
  const Estimate five = estimate({1, 2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(five.mean, 3.0);
  // s = sqrt(2.5); half-width = t(0.975, 4) · s / sqrt(5).
  ASSERT_TRUE(five.ci95_half_width);
  EXPECT_NEAR(*five.ci95_half_width, 2.7764 * std::sqrt(2.5) / std::sqrt(5.0), 1e-4);
  const Estimate one = estimate({7});
  EXPECT_DOUBLE_EQ(one.mean, 7.0);
  EXPECT_FALSE(one.ci95_half_width);
}

TEST(Objective, ParsesEveryFormAndRoundTrips) {
  EXPECT_EQ(parse_objective("energy"), (Objective{Objective::Kind::energy, 0}));
  EXPECT_EQ(parse_objective("edp").kind, Objective::Kind::edp);
  EXPECT_EQ(parse_objective("ed2p").kind, Objective::Kind::ed2p);
  EXPECT_EQ(parse_objective("energy-within-slowdown:5%"),
            (Objective{Objective::Kind::energy_within_slowdown, 5}));
  EXPECT_EQ(parse_objective("energy-within-slowdown:2.5"),
            (Objective{Objective::Kind::energy_within_slowdown, 2.5}));
  EXPECT_EQ(parse_objective("time-within-power:300W"), (Objective{Objective::Kind::time_within_power, 300}));
  for (const char* text : {"energy", "edp", "ed2p", "energy-within-slowdown:5%", "time-within-power:300W"}) {
    EXPECT_EQ(to_string(parse_objective(text)), text);
  }
}

TEST(Objective, RejectsMalformedTextWithTheAcceptedForms) {
  for (const char* text :
       {"", "power", "energy-within-slowdown", "energy-within-slowdown:-1%", "energy-within-slowdown:five%",
        "time-within-power:0W", "time-within-power:300kW"}) {
    EXPECT_THROW(parse_objective(text), ConfigError) << text;
  }
  try {
    parse_objective("speed");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("energy-within-slowdown:5%"), std::string::npos);
  }
}

TEST(Metrics, DerivedPerPointWithIntervals) {
  const Analysis a = analyze(
      {row(1000, 0.10, 200, false, 0), row(1000, 0.12, 220, false, 1), row(1000, 0.11, 210, false, 2)});
  ASSERT_EQ(a.cases.size(), 1u);
  const PointSummary& p = a.cases[0].points[0];
  EXPECT_EQ(p.repetitions, 3);
  EXPECT_NEAR(p.time_per_iteration_s.mean, 0.11, 1e-12);
  EXPECT_NEAR(p.mean_power_w.mean, 210, 1e-9);
  EXPECT_NEAR(p.energy_per_iteration_j.mean, (20.0 + 26.4 + 23.1) / 3, 1e-9);
  EXPECT_NEAR(p.energy_per_item_j.mean, (20.0 + 26.4 + 23.1) / 3 / 64, 1e-12);
  EXPECT_NEAR(p.throughput_items_per_s.mean, (640 + 64 / 0.12 + 64 / 0.11) / 3, 1e-9);
  EXPECT_NEAR(p.edp_j_s.mean, (20.0 * 0.10 + 26.4 * 0.12 + 23.1 * 0.11) / 3, 1e-12);
  EXPECT_NEAR(p.ed2p_j_s2.mean, (20.0 * 0.01 + 26.4 * 0.0144 + 23.1 * 0.0121) / 3, 1e-12);
  ASSERT_TRUE(p.time_per_iteration_s.ci95_half_width);
  EXPECT_NEAR(*p.time_per_iteration_s.ci95_half_width, 4.3027 * 0.01 / std::sqrt(3.0), 1e-6);
}

TEST(Baseline, UsesTheDefaultRowWhereMarked) {
  const Analysis a = analyze({row(1500, 1.0, 300), row(1200, 1.1, 220, true), row(900, 1.4, 150)});
  const CaseAnalysis& c = a.cases[0];
  EXPECT_EQ(c.baseline_kind, BaselineKind::vendor_default);
  EXPECT_EQ(c.points[c.baseline].setting.sm_mhz, 1200);
}

TEST(Baseline, MissingDefaultFallsBackToTheHighestSetting) {
  const Analysis a = analyze({row(900, 1.4, 150), row(1500, 1.0, 300), row(1200, 1.1, 220)});
  const CaseAnalysis& c = a.cases[0];
  EXPECT_EQ(c.baseline_kind, BaselineKind::highest_setting);
  EXPECT_EQ(c.points[c.baseline].setting.sm_mhz, 1500);
  ASSERT_TRUE(c.optimum);
  EXPECT_EQ(c.points[*c.optimum].setting.sm_mhz, 900);  // 210 J against 242 J and 300 J
}

TEST(SettingOrder, SmThenMemoryThenPowerLimitWithAbsentOnTop) {
  EXPECT_TRUE(setting_order_before({1500, 800, std::nullopt}, {1400, 900, std::nullopt}));
  EXPECT_TRUE(setting_order_before({1500, 900, std::nullopt}, {1500, 800, std::nullopt}));
  EXPECT_TRUE(setting_order_before({std::nullopt, std::nullopt, 250}, {std::nullopt, std::nullopt, 200}));
  EXPECT_TRUE(setting_order_before({std::nullopt, 800, std::nullopt}, {2000, 800, std::nullopt}));
  EXPECT_FALSE(setting_order_before({1500, 800, 300}, {1500, 800, 300}));
}

TEST(Optimum, SingleSettingIsItsOwnBaselineAndOptimum) {
  const Analysis a = analyze({row(1000, 0.5, 100)});
  const CaseAnalysis& c = a.cases[0];
  EXPECT_EQ(c.baseline, 0u);
  EXPECT_EQ(c.optimum, 0u);
  EXPECT_DOUBLE_EQ(*c.energy_saving_pct, 0.0);
  EXPECT_DOUBLE_EQ(*c.time_change_pct, 0.0);
  EXPECT_EQ(c.pareto, std::vector<std::size_t>{0});
}

TEST(Optimum, TiesGoToTheFasterSettingThenToTheHigherSetting) {
  // 1200 and 900 use the same energy (200 J); 1200 is faster.
  Analysis a = analyze({row(1500, 1.0, 300), row(1200, 1.0, 200), row(900, 2.0, 100)});
  EXPECT_EQ(a.cases[0].points[*a.cases[0].optimum].setting.sm_mhz, 1200);
  // Same energy and time: the higher setting wins, whatever the row order.
  a = analyze({row(900, 1.0, 200), row(1500, 1.0, 300), row(1200, 1.0, 200)});
  EXPECT_EQ(a.cases[0].points[*a.cases[0].optimum].setting.sm_mhz, 1200);
}

TEST(Objectives, EachPicksItsOwnSetting) {
  // energy: 1.0·300=300, 1.1·220=242, 1.5·150=225, 2.4·100=240 -> 900 MHz.
  const std::vector<ResultRow> rows = {row(1500, 1.0, 300), row(1200, 1.1, 220), row(900, 1.5, 150),
                                       row(600, 2.4, 100)};
  const auto optimum_mhz = [&](const char* objective) -> std::optional<int> {
    const Analysis a = analyze(rows, parse_objective(objective));
    const CaseAnalysis& c = a.cases[0];
    if (!c.optimum) return std::nullopt;
    return c.points[*c.optimum].setting.sm_mhz;
  };
  EXPECT_EQ(optimum_mhz("energy"), 900);
  // edp: 300, 266.2, 337.5, 576 -> 1200; ed2p: 300, 292.8, 506, 1382 -> 1200.
  EXPECT_EQ(optimum_mhz("edp"), 1200);
  EXPECT_EQ(optimum_mhz("ed2p"), 1200);
  EXPECT_EQ(optimum_mhz("energy-within-slowdown:5%"), 1500);
  EXPECT_EQ(optimum_mhz("energy-within-slowdown:10%"), 1200);
  EXPECT_EQ(optimum_mhz("energy-within-slowdown:50%"), 900);
  EXPECT_EQ(optimum_mhz("time-within-power:250W"), 1200);
  EXPECT_EQ(optimum_mhz("time-within-power:300W"), 1500);
  EXPECT_EQ(optimum_mhz("time-within-power:50W"), std::nullopt);

  const Analysis energy = analyze(rows);
  EXPECT_NEAR(*energy.cases[0].energy_saving_pct, 25.0, 1e-9);
  EXPECT_NEAR(*energy.cases[0].time_change_pct, 50.0, 1e-9);
  EXPECT_NEAR(*energy.cases[0].power_change_pct, -50.0, 1e-9);
}

TEST(Pareto, KeepsOnlyUndominatedPointsFastestFirst) {
  // (time, energy): 1500 (1.0, 300), 1200 (1.1, 242), 1100 (1.2, 250) dominated,
  // 900 (1.5, 225), 600 (2.4, 240) dominated, 800 (1.5, 225) equal to 900: dropped.
  const Analysis a = analyze({row(1500, 1.0, 300), row(1200, 1.1, 220), row(1100, 1.2, 250.0 / 1.2),
                              row(900, 1.5, 150), row(600, 2.4, 100), row(800, 1.5, 150)});
  const CaseAnalysis& c = a.cases[0];
  std::vector<int> frontier;
  for (std::size_t i : c.pareto) frontier.push_back(*c.points[i].setting.sm_mhz);
  EXPECT_EQ(frontier, (std::vector<int>{1500, 1200, 900}));
}

TEST(Aggregates, GeometricMeansAcrossBatchesThenNetworksAndTheSavingRange) {
  // Two networks; alexnet at two batch sizes with energy ratios 0.8 and 0.9,
  // vgg16 at one with 0.5.
  const std::vector<ResultRow> rows = {
      row(1500, 1.0, 100, false, 0, "alexnet", 32), row(1000, 1.6, 50, false, 0, "alexnet", 32),
      row(1500, 1.0, 100, false, 0, "alexnet", 64), row(1000, 1.5, 60, false, 0, "alexnet", 64),
      row(1500, 1.0, 100, false, 0, "vgg16", 32),   row(1000, 1.25, 40, false, 0, "vgg16", 32)};
  const Analysis a = analyze(rows);
  ASSERT_EQ(a.workloads.size(), 2u);
  EXPECT_EQ(a.workloads[0].workload, "alexnet");
  EXPECT_EQ(a.workloads[0].batches, (std::vector<int>{32, 64}));
  EXPECT_NEAR(a.workloads[0].across_batches.energy_saving_pct, (1 - std::sqrt(0.8 * 0.9)) * 100, 1e-9);
  EXPECT_NEAR(a.workloads[0].across_batches.time_change_pct, (std::sqrt(1.6 * 1.5) - 1) * 100, 1e-9);
  ASSERT_EQ(a.summary.size(), 1u);
  const GpuModeSummary& s = a.summary[0];
  EXPECT_EQ(s.cases, 3);
  EXPECT_EQ(s.workloads, 2);
  EXPECT_NEAR(*s.energy_saving_min_pct, 10.0, 1e-9);
  EXPECT_NEAR(*s.energy_saving_max_pct, 50.0, 1e-9);
  EXPECT_NEAR(s.across_workloads->energy_saving_pct, (1 - std::sqrt(std::sqrt(0.8 * 0.9) * 0.5)) * 100, 1e-9);
}

TEST(Aggregates, CasesWithoutOptimumAreCountedNotAveraged) {
  const Analysis a = analyze({row(1500, 1.0, 300, false, 0, "a"), row(1500, 1.0, 100, false, 0, "b")},
                             parse_objective("time-within-power:200W"));
  ASSERT_EQ(a.summary.size(), 1u);
  EXPECT_EQ(a.summary[0].cases, 2);
  EXPECT_EQ(a.summary[0].cases_without_optimum, 1);
  EXPECT_EQ(a.summary[0].workloads, 1);
}

TEST(Grouping, SeparatesGpusSourcesSimulationAndCases) {
  ResultRow simulated = row(1500, 1.0, 300);
  simulated.simulated = true;
  ResultRow other_gpu = row(1500, 1.0, 300);
  other_gpu.gpu = "Other GPU";
  const Analysis a =
      analyze({row(1500, 1.0, 300), simulated, other_gpu, row(1500, 1.0, 300, false, 0, "resnet50", 128)});
  EXPECT_EQ(a.cases.size(), 4u);
  EXPECT_EQ(a.summary.size(), 3u);
}

TEST(Grouping, RejectsRowsThatCannotBeMeasurements) {
  EXPECT_THROW(analyze({}), ConfigError);
  EXPECT_THROW(analyze({row(1500, 0.0, 300)}), ConfigError);
  EXPECT_THROW(analyze({row(1500, 1.0, -5)}), ConfigError);
  EXPECT_THROW(analyze({row(1500, std::nan(""), 300)}), ConfigError);
}

TEST(Json, ContractHasNullForUncontrolledKnobsAndMissingValues) {
  const nlohmann::json j = to_json(analyze({row(1500, 1.0, 300), row(900, 1.5, 150)}), true);
  const auto& c = j.at("cases").at(0);
  EXPECT_EQ(c.at("gpu"), "Test GPU");
  EXPECT_EQ(c.at("workload"), "resnet50");
  EXPECT_EQ(c.at("batch"), 64);
  EXPECT_EQ(c.at("mode"), "train");
  EXPECT_EQ(c.at("precision"), "fp32");
  EXPECT_EQ(c.at("simulated"), false);
  EXPECT_EQ(c.at("baseline").at("sm_mhz"), 1500);
  EXPECT_TRUE(c.at("baseline").at("mem_mhz").is_null());
  EXPECT_TRUE(c.at("optimum").at("power_limit_w").is_null());
  EXPECT_EQ(c.at("optimum").at("sm_mhz"), 900);
  EXPECT_NEAR(c.at("energy_saving_pct").get<double>(), 25.0, 1e-9);
  EXPECT_NEAR(c.at("time_change_pct").get<double>(), 50.0, 1e-9);
  EXPECT_NEAR(c.at("power_change_pct").get<double>(), -50.0, 1e-9);
  EXPECT_EQ(c.at("points").size(), 2u);
  EXPECT_TRUE(c.at("points").at(0).at("time_per_iteration_s").at("ci95").is_null());
  EXPECT_EQ(j.at("summary").at(0).at("gpu"), "Test GPU");
  EXPECT_EQ(j.at("objective"), "energy");

  const nlohmann::json none =
      to_json(analyze({row(1500, 1.0, 300)}, parse_objective("time-within-power:10W")));
  EXPECT_TRUE(none.at("cases").at(0).at("optimum").is_null());
  EXPECT_TRUE(none.at("cases").at(0).at("energy_saving_pct").is_null());
}

ResultRow row_of_run(std::int64_t run, std::optional<int> sm, int repetition, bool is_default = false) {
  ResultRow r = row(sm, 0.1, sm ? 200.0 : 250.0, is_default, repetition);
  r.run_id = run;
  return r;
}

TEST(Pooling, TunePooling_RunsThatMeasuredTheSamePointsOfACaseAreWarnedAbout) {
  // Two runs of one plan written into one database: each measured both settings.
  std::vector<ResultRow> rows;
  for (std::int64_t run : {1, 2})
    for (int repetition : {0, 1})
      for (const std::optional<int> sm : {std::optional<int>{}, std::optional<int>{900}})
        rows.push_back(row_of_run(run, sm, repetition, !sm));
  const Analysis pooled = analyze(rows);
  ASSERT_EQ(pooled.cases.size(), 1u);
  EXPECT_EQ(pooled.cases[0].overlapping_runs, (std::vector<std::int64_t>{1, 2}));
  const auto warnings = pooling_warnings(pooled);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("runs 1, 2 each measured the same settings"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("resnet50"), std::string::npos) << warnings[0];

  // Shards of one sweep (each point measured by one run) and rows of a table read
  // directly (no run) are one experiment: no warning.
  const Analysis shards = analyze({row_of_run(1, std::nullopt, 0, true), row_of_run(1, std::nullopt, 1, true),
                                   row_of_run(2, 900, 0), row_of_run(2, 900, 1)});
  EXPECT_TRUE(shards.cases[0].overlapping_runs.empty());
  EXPECT_TRUE(pooling_warnings(shards).empty());
  const Analysis table =
      analyze({row_of_run(0, std::nullopt, 0, true), row_of_run(0, std::nullopt, 0, true)});
  EXPECT_TRUE(pooling_warnings(table).empty());
}

}  // namespace
}  // namespace dvfslab
