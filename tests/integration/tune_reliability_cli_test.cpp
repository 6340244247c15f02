// dvfslab tune against hostile jobs and with its database: every registered
// strategy's run is stored and the job's exit code kept, the database is checked
// before the job starts, absurd marker counts are refused rather than wrapped, a
// job that keeps changing gives bounded warnings, and a tuned job's phases stay
// separate cases for `analyze`, in a database of tune's own.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "dvfslab/store.hpp"
#include "dvfslab/strategy.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

// A job that writes `lines` marker lines as fast as it can, then exits with `code`.
std::string marker_job(int lines, const std::string& marker, int code) {
  return "for i in $(seq " + std::to_string(lines) + "); do echo '" + marker +
         "' >&$DVFSLAB_MARK_FD; done; exit " + std::to_string(code);
}

std::vector<RunInfo> runs_in(const std::filesystem::path& db) { return Store::open_existing(db).runs(); }

TEST(TuneReliabilityCli, H2_EveryRegisteredStrategyTunesASimulatedJobAndItsRunIsStored) {
  testing::ScratchDir scratch;
  for (const StrategyDefinition& definition : search_strategies()) {
    const std::string strategy(definition.name);
    const std::filesystem::path db = scratch / (strategy + ".sqlite");
    const auto result = testing::run_dvfslab({"tune", "--device", "sim:v100", "--sim-job", "resnet50:3000",
                                              "--strategy", strategy, "--db", db.string(), "--json"});
    ASSERT_EQ(result.exit_code, 0) << strategy << ": " << result.err;
    const auto report = nlohmann::json::parse(result.out);
    EXPECT_FALSE(report.at("phases").at(0).at("best").is_null()) << strategy << ": " << result.out;
    const auto runs = runs_in(db);
    ASSERT_EQ(runs.size(), 1u) << strategy;
    EXPECT_EQ(runs[0].status, RunStatus::finished) << strategy;
    EXPECT_EQ(Store::open_existing(db).result_rows().size(), report.at("probes").size()) << strategy;
  }
}

TEST(TuneReliabilityCli, H2_TheJobsExitCodeIsKeptWhenTheStrategyMeasuresASettingAgain) {
  testing::ScratchDir scratch;
  const std::filesystem::path db = scratch / "t.sqlite";
  // The grid measures the default again (its drift checks) well within 600 iterations.
  const auto result = testing::run_dvfslab(
      {"tune", "--device", "sim:v100", "--strategy", "grid", "--db", db.string(), "--warmup-iters", "2",
       "--probe-iters", "3", "--json", "--", "bash", "-c", marker_job(600, "dvfslab:iter 1", 3)});
  EXPECT_EQ(result.exit_code, 3) << result.err;
  const auto report = nlohmann::json::parse(result.out);
  int default_windows = 0;
  for (const auto& probe : report.at("probes")) default_windows += probe.at("setting").at("sm_mhz").is_null();
  EXPECT_GT(default_windows, 1) << result.out;
  const auto runs = runs_in(db);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, RunStatus::finished);
}

TEST(TuneReliabilityCli, M4_MarkerCountsPastTheTotalsAreRefusedRatherThanWrapped) {
  testing::ScratchDir scratch;
  const auto result = testing::run_dvfslab(
      {"tune", "--device", "sim:v100", "--db", (scratch / "t.sqlite").string(), "--json", "--", "bash", "-c",
       marker_job(20, "dvfslab:iter 1000000000000000000 items 1e308", 0)});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = nlohmann::json::parse(result.out);
  // The first line fits; a second 1e308 items would pass the largest finite count.
  EXPECT_EQ(report.at("iterations").get<std::int64_t>(), 1'000'000'000'000'000'000) << result.out;
  EXPECT_EQ(report.at("items").get<double>(), 1e308) << result.out;
  EXPECT_NE(result.err.find("19 marker lines were refused"), std::string::npos) << result.err;

  // Iteration counts alone: the total stops at the largest count that fits.
  const auto counts =
      testing::run_dvfslab({"tune", "--device", "sim:v100", "--db", (scratch / "t.sqlite").string(), "--json",
                            "--", "bash", "-c", marker_job(20, "dvfslab:iter 1000000000000000000", 0)});
  ASSERT_EQ(counts.exit_code, 0) << counts.err;
  const auto count_report = nlohmann::json::parse(counts.out);
  EXPECT_EQ(count_report.at("iterations").get<std::int64_t>(), 9'000'000'000'000'000'000) << counts.out;
  EXPECT_NE(counts.err.find("11 marker lines were refused"), std::string::npos) << counts.err;
}

TEST(TuneReliabilityCli, M5_ADatabaseThatCannotBeOpenedIsRefusedBeforeTheJobStarts) {
  testing::ScratchDir scratch;
  const std::filesystem::path started = scratch / "started";
  const auto result = testing::run_dvfslab({"tune", "--device", "sim:v100", "--db", "/nonexistent/d/t.sqlite",
                                            "--", "bash", "-c", "touch " + started.string()});
  EXPECT_EQ(result.exit_code, 8) << result.err;
  EXPECT_NE(result.err.find("/nonexistent/d/t.sqlite"), std::string::npos) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_FALSE(std::filesystem::exists(started)) << "the job must not start";
}

TEST(TuneReliabilityCli, L7_AJobThatKeepsChangingPastTheRetuneBudgetGetsOneWarning) {
  testing::ScratchDir scratch;
  std::string job;
  for (int phase = 0; phase < 60; ++phase)
    job += std::string(phase == 0 ? "" : ",") + (phase % 2 == 0 ? "resnet50:200" : "alexnet/infer/b256:200");
  const auto result = testing::run_dvfslab({"tune", "--device", "sim:v100", "--sim-job", job, "--max-retunes",
                                            "1", "--warmup-iters", "0", "--probe-iters", "20", "--db",
                                            (scratch / "t.sqlite").string(), "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = nlohmann::json::parse(result.out);
  ASSERT_EQ(report.at("warnings").size(), 1u) << report.at("warnings");
  EXPECT_NE(report.at("warnings")[0].get<std::string>().find("more such shifts"), std::string::npos);
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_LE(report.at("held").size(), 2u);
}

TEST(TuneReliabilityCli, TunePooling_EachPhaseOfATunedJobIsACaseOfItsOwn) {
  testing::ScratchDir scratch;
  const std::string db = (scratch / "t.sqlite").string();
  const auto tuned = testing::run_dvfslab({"tune", "--device", "sim:v100", "--sim-job",
                                           "resnet50/train/b64:3000,alexnet/infer/b256:3000", "--db", db});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  const auto analyzed = testing::run_dvfslab({"analyze", db, "--json"});
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
  EXPECT_EQ(analyzed.err.find("warning"), std::string::npos) << analyzed.err;
  const auto cases = nlohmann::json::parse(analyzed.out).at("cases");
  ASSERT_EQ(cases.size(), 2u) << analyzed.out;
  for (std::size_t phase = 0; phase < cases.size(); ++phase) {
    const auto& c = cases[phase];
    EXPECT_NE(c.at("workload").get<std::string>().find("phase " + std::to_string(phase)), std::string::npos)
        << c;
    // A phase's own default against its own probes: the simulator's savings are tens of
    // percent, never the +95 % of pooling a light phase's probes with a heavy one's default.
    const double saving = c.at("energy_saving_pct").get<double>();
    EXPECT_GT(saving, 0) << c;
    EXPECT_LT(saving, 50) << c;
  }
}

TEST(TuneReliabilityCli, TunePooling_TuneWritesADatabaseOfItsOwnByDefault) {
  testing::ScratchDir scratch;
  const auto result = testing::run_process(
      "/bin/bash", {"-c", "cd '" + scratch.path().string() + "' && exec '" + std::string(DVFSLAB_BINARY) +
                              "' tune --device sim:v100 --sim-job resnet50:200"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(std::filesystem::exists(scratch / "dvfslab-tune.sqlite"));
  EXPECT_FALSE(std::filesystem::exists(scratch / "dvfslab.sqlite")) << "the sweeps' and searches' database";
}

TEST(TuneReliabilityCli, TunePooling_AnalyzeWarnsWhenTwoRunsMeasuredTheSamePointsOfACase) {
  testing::ScratchDir scratch;
  const std::string db = (scratch / "t.sqlite").string();
  for (int run = 0; run < 2; ++run) {
    const auto tuned =
        testing::run_dvfslab({"tune", "--device", "sim:v100", "--sim-job", "resnet50:500", "--db", db});
    ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  }
  const auto analyzed = testing::run_dvfslab({"analyze", db});
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
  EXPECT_NE(analyzed.err.find("warning: tune:sim-job resnet50:500 phase 0"), std::string::npos)
      << analyzed.err;
  EXPECT_NE(analyzed.err.find("runs 1, 2 each measured the same settings"), std::string::npos)
      << analyzed.err;
}

}  // namespace
}  // namespace dvfslab
