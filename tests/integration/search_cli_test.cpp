// dvfslab search on the simulated V100 and on a published table: the JSON
// contract, determinism, --resume after a kill, and one line with the documented
// exit code for every bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

const std::string power_limit_table = std::string(DVFSLAB_SHARED_DATA_DIR) + "/v100-dnn-power-limit.csv";

std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

class SearchCliTest : public ::testing::Test {
 protected:
  testing::ProcessResult search(std::vector<std::string> arguments, const std::string& db = "db.sqlite",
                                testing::EnvironmentChanges environment = {}) {
    arguments.insert(arguments.begin(), "search");
    arguments.insert(arguments.end(), {"--db", (dir_ / db).string()});
    environment.try_emplace("DVFSLAB_TEST_KILL_AFTER_POINTS", std::nullopt);
    return testing::run_dvfslab(arguments, environment);
  }

  static std::vector<std::string> sim_search() {
    return {"--device",   "sim:v100", "--workload", "resnet50", "--batch", "32",
            "--strategy", "grid",     "--budget",   "5",        "--json"};
  }

  // The search run whole, and killed after `kill_after` measured points then resumed
  // in another database; the resumed run must end as the whole one did. Where the
  // simulated GPU measures the same after the restart (`exact`), the same probes give
  // the same energies; otherwise (a fresh process finds the simulated H200 cool again)
  // the resumed optimum must be within the search's resolution (0.5 %) of the other.
  std::pair<nlohmann::json, nlohmann::json> uninterrupted_and_resumed(
      const std::vector<std::string>& arguments, const std::string& kill_after, bool exact = true) {
    const auto whole = search(arguments, "whole.sqlite");
    EXPECT_EQ(whole.exit_code, 0) << whole.err;
    const auto killed = search(arguments, "resumed.sqlite", {{"DVFSLAB_TEST_KILL_AFTER_POINTS", kill_after}});
    EXPECT_EQ(killed.exit_code, 128 + 9) << killed.err;
    std::vector<std::string> resume = arguments;
    resume.push_back("--resume");
    const auto resumed = search(resume, "resumed.sqlite");
    EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
    if (whole.exit_code != 0 || resumed.exit_code != 0) return {};
    auto expected = nlohmann::json::parse(whole.out), got = nlohmann::json::parse(resumed.out);
    EXPECT_TRUE(got["resumed"].get<bool>());
    EXPECT_EQ(got["run_id"], 1) << "the killed run continued";
    const double optimum_energy = expected["optimum"]["energy_per_item_j"].get<double>();
    EXPECT_NEAR(got["optimum"]["energy_per_item_j"].get<double>(), optimum_energy,
                optimum_energy * (exact ? 1e-9 : 0.005));
    if (!exact) return {expected, got};
    for (const char* knob : {"sm_mhz", "mem_mhz", "power_limit_w"})
      EXPECT_EQ(got["optimum"][knob], expected["optimum"][knob]) << knob;
    EXPECT_EQ(got["probes"].size(), expected["probes"].size());
    for (std::size_t i = 0; i < std::min(got["probes"].size(), expected["probes"].size()); ++i) {
      for (const char* knob : {"sm_mhz", "mem_mhz", "power_limit_w"})
        EXPECT_EQ(got["probes"][i][knob], expected["probes"][i][knob]) << i << " " << knob;
      const double energy = expected["probes"][i]["energy_per_item_j"].get<double>();
      EXPECT_NEAR(got["probes"][i]["energy_per_item_j"].get<double>(), energy, energy * 1e-9) << i;
    }
    return {expected, got};
  }

  testing::ScratchDir scratch_;
  const std::filesystem::path dir_ = scratch_.path();
};

TEST_F(SearchCliTest, JsonOnTheSimulatedGpuHasTheOptimumProbesSavingAndGpuTime) {
  const auto result = search(sim_search());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  ASSERT_TRUE(json["optimum"].is_object()) << result.out;
  EXPECT_TRUE(json["optimum"]["sm_mhz"].is_number_integer()) << "the searched knob";
  EXPECT_TRUE(json["optimum"]["mem_mhz"].is_null()) << "not controlled";
  EXPECT_TRUE(json["optimum"]["power_limit_w"].is_null()) << "not controlled";
  const auto& probes = json["probes"];
  ASSERT_EQ(probes.size(), 5u) << "--budget 5: the default and four probes";
  EXPECT_TRUE(probes[0]["is_default"].get<bool>()) << "the baseline is measured first";
  double lowest = probes[0]["energy_per_item_j"].get<double>();
  for (std::size_t i = 0; i < probes.size(); ++i) {
    EXPECT_EQ(probes[i]["order"], static_cast<int>(i) + 1);
    EXPECT_GE(probes[i]["repetitions"].get<int>(), 2) << "--repetitions defaults to 2";
    EXPECT_GT(probes[i]["energy_per_item_j"].get<double>(), 0);
    lowest = std::min(lowest, probes[i]["energy_per_item_j"].get<double>());
  }
  EXPECT_DOUBLE_EQ(json["optimum"]["energy_per_item_j"].get<double>(), lowest) << "energy: the least probed";
  EXPECT_TRUE(json["saving_pct"].is_number());
  EXPECT_GT(json["gpu_seconds"].get<double>(), 0);
  EXPECT_TRUE(json["stopped_by_budget"].get<bool>());
  EXPECT_EQ(json["strategy"], "grid");
  EXPECT_TRUE(json["simulated"].get<bool>());
  const double confidence = json["confidence_within_1pct"].get<double>();
  EXPECT_GE(confidence, 0.0);
  EXPECT_LE(confidence, 1.0);
}

TEST_F(SearchCliTest, TheSameSearchGivesTheSameResultOnTheSimulatedGpu) {
  const auto first = search(sim_search(), "first.sqlite");
  const auto second = search(sim_search(), "second.sqlite");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(second.exit_code, 0) << second.err;
  auto a = nlohmann::json::parse(first.out), b = nlohmann::json::parse(second.out);
  a.erase("database");
  b.erase("database");
  EXPECT_EQ(a, b);
}

TEST_F(SearchCliTest, TextOutputNamesTheOptimumTheProbesTheConfidenceAndTheGpuTime) {
  std::vector<std::string> arguments = sim_search();
  arguments.pop_back();  // no --json
  const auto result = search(arguments);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* expected :
       {"strategy grid", "probes, in measuring order", "optimum: ", "against the default",
        "confidence that the optimum is within 1 %", "GPU time: "}) {
    EXPECT_NE(result.out.find(expected), std::string::npos) << expected << "\n" << result.out;
  }
}

TEST_F(SearchCliTest, OnAReplayedTableTheGridSearchFindsTheTablesOptimumPowerLimit) {
  const auto result =
      search({"--device", "replay:" + power_limit_table, "--workload", "cifar100/shufflenetv2/b1024/adam",
              "--knobs", "pl", "--strategy", "grid", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  // The table's least energy for this workload is at 125 W, 33.67 % under the 250 W default.
  EXPECT_EQ(json["optimum"]["power_limit_w"], 125) << result.out;
  EXPECT_TRUE(json["optimum"]["sm_mhz"].is_null());
  EXPECT_NEAR(json["saving_pct"].get<double>(), 33.67, 0.01);
  EXPECT_EQ(json["probes"].size(), 8u) << "the default and the table's seven power limits";
  EXPECT_FALSE(json["simulated"].get<bool>());
}

TEST_F(SearchCliTest, AnUnknownWorkloadKeyOfAReplayedTableIsOneLineWithExit3) {
  const auto result =
      search({"--device", "replay:" + power_limit_table, "--workload", "no/such/key", "--knobs", "pl"});
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_EQ(lines(result.err), 1u) << result.err;
  EXPECT_NE(result.err.find("no/such/key"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("v100-dnn-power-limit.csv"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "db.sqlite"));
}

TEST_F(SearchCliTest, AMeasureOptionOutOfItsRangeOrNotANumberIsNamedWithItsRange) {
  for (const auto& [option, value, range] :
       {std::tuple{"--duration", "nan", "from 0.001 to 3600"}, std::tuple{"--settle", "-1", "from 0 to 3600"},
        std::tuple{"--ci-target", "nan", "from 0.001 to 100"},
        std::tuple{"--repetitions", "0", "from 1 to 1000"}}) {
    const auto result = search({"--device", "sim:v100", "--workload", "alexnet", option, value});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_EQ(result.err, std::string("dvfslab: error: ") + option + ": must be " + range + ", not " + value +
                              " (see dvfslab --help)\n");
    EXPECT_FALSE(std::filesystem::exists(dir_ / "db.sqlite"));
  }
}

TEST_F(SearchCliTest, AKnobTheReplayedTableDoesNotVaryIsOneLineWithExit3) {
  const auto result = search({"--device", "replay:" + power_limit_table, "--workload",
                              "cifar100/shufflenetv2/b1024/adam", "--knobs", "sm"});
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_EQ(lines(result.err), 1u) << result.err;
}

TEST_F(SearchCliTest, EveryBadOptionIsOneLineWithItsExitCodeAndLeavesNoDatabase) {
  struct BadInput {
    std::vector<std::string> options;
    int exit_code;
    const char* names;
  };
  const std::vector<BadInput> cases = {
      {{"--strategy", "no-such"}, 2, "no-such"},
      {{"--knobs", "sm,foo"}, 2, "foo"},
      {{"--knobs", "sm,sm"}, 2, "twice"},
      {{"--knobs", ""}, 2, "--knobs"},
      {{"--budget", "0"}, 2, "--budget"},
      {{"--budget", "-3"}, 2, "--budget"},
      {{"--budget", "10001"}, 2, "--budget"},
      {{"--budget", "99999999999999999999"}, 2, "--budget"},
      {{"--budget-seconds", "0"}, 2, "--budget-seconds"},
      {{"--budget-seconds", "nan"}, 2, "--budget-seconds"},
      {{"--budget-seconds", "1e12"}, 2, "--budget-seconds"},
      {{"--budget", "3", "--budget-seconds", "10"}, 2, "excludes"},
      {{"--objective", "speed"}, 3, "speed"},
      {{"--repetitions", "0"}, 2, "--repetitions"},
      {{"--workload", "no-such-network"}, 3, "no-such-network"},
  };
  for (const auto& bad : cases) {
    std::vector<std::string> arguments = {"--device", "sim:v100", "--batch", "32"};
    if (bad.options.front() != "--workload") arguments.insert(arguments.end(), {"--workload", "resnet50"});
    arguments.insert(arguments.end(), bad.options.begin(), bad.options.end());
    const auto result = search(arguments);
    const std::string label = bad.options.front() + " " + bad.options.back();
    EXPECT_EQ(result.exit_code, bad.exit_code) << label << ": " << result.err;
    EXPECT_EQ(lines(result.err), 1u) << label << ": " << result.err;
    EXPECT_NE(result.err.find(bad.names), std::string::npos) << label << ": " << result.err;
    EXPECT_TRUE(result.out.empty()) << label;
    EXPECT_FALSE(std::filesystem::exists(dir_ / "db.sqlite")) << label;
  }
}

TEST_F(SearchCliTest, ResumeAfterAKillReusesTheStoredProbesAndEndsAtTheSameOptimum) {
  // The default strategy, adaptive: the resumed search must choose the same probes.
  const auto [expected, got] = uninterrupted_and_resumed(
      {"--device", "sim:v100", "--workload", "resnet50", "--batch", "32", "--json"}, "3");
  EXPECT_LT(got["gpu_seconds"].get<double>(), expected["gpu_seconds"].get<double>())
      << "the three stored probes were not measured again";
}

// H1: the model is fitted to the throughput and power of the first windows; a resumed
// run handed its stored probes back without them, so the fit had no points.
TEST_F(SearchCliTest, H1_AResumedModelSearchEndsAtTheUninterruptedOptimum) {
  uninterrupted_and_resumed(
      {"--device", "sim:v100", "--workload", "resnet50", "--batch", "32", "--strategy", "model", "--json"},
      "5");
}

TEST_F(SearchCliTest, H1_AResumedAutoSearchOverTwoKnobsEndsAtTheUninterruptedOptimum) {
  uninterrupted_and_resumed(
      {"--device", "sim:h200", "--workload", "resnet50", "--batch", "32", "--knobs", "sm,mem", "--json"}, "9",
      false);
}

// Issue 27's three knobs: SM clock × memory clock × power limit on the simulated
// H200 (110 × 2 × 16 = 3,520 settings), auto against the exhaustive sweep.
TEST_F(SearchCliTest, ThreeKnobsOnTheSimulatedH200EndWithinOnePercentOfTheExhaustiveSweep) {
  const std::vector<std::string> three_knobs = {"--device", "sim:h200",  "--workload", "resnet50",
                                                "--knobs",  "sm,mem,pl", "--json"};
  const auto searched = search(three_knobs, "auto.sqlite");
  std::vector<std::string> exhaustive = three_knobs;
  exhaustive.insert(exhaustive.end(), {"--strategy", "grid"});
  const auto swept = search(exhaustive, "grid.sqlite");
  ASSERT_EQ(searched.exit_code, 0) << searched.err;
  ASSERT_EQ(swept.exit_code, 0) << swept.err;
  const auto found = nlohmann::json::parse(searched.out), every = nlohmann::json::parse(swept.out);
  ASSERT_EQ(every["probes"].size(), 1u + 110 * 2 * 16) << "the default and every setting";
  for (const char* knob : {"sm_mhz", "mem_mhz", "power_limit_w"})
    EXPECT_TRUE(found["optimum"][knob].is_number_integer()) << knob << ": " << found["optimum"];
  const double least = every["optimum"]["energy_per_item_j"].get<double>();
  EXPECT_LE(found["optimum"]["energy_per_item_j"].get<double>(), 1.01 * least) << found["optimum"];
  EXPECT_LT(found["probes"].size(), 100u);
  EXPECT_LT(found["gpu_seconds"].get<double>(), 0.05 * every["gpu_seconds"].get<double>());
}

TEST_F(SearchCliTest, H1_AResumedSweepWithTheModelStrategyEndsAtTheUninterruptedOptimum) {
  std::ofstream(dir_ / "plan.toml") << "[plan]\nname = \"model\"\n[knobs]\nsm_mhz = { count = 12 }\n"
                                       "[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = [32]\n"
                                       "[measure]\nrepetitions = 2\ndrift_check = false\n";
  const auto sweep = [&](const std::string& db, testing::EnvironmentChanges environment,
                         std::vector<std::string> extra) {
    std::vector<std::string> arguments = {
        "sweep", (dir_ / "plan.toml").string(), "--device", "sim:v100", "--strategy", "model",
        "--db",  (dir_ / db).string()};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    environment.try_emplace("DVFSLAB_TEST_KILL_AFTER_POINTS", std::nullopt);
    return testing::run_dvfslab(arguments, environment);
  };
  const auto optimum_of = [&](const std::string& db) {
    const auto analysis = testing::run_dvfslab({"analyze", (dir_ / db).string(), "--json"});
    EXPECT_EQ(analysis.exit_code, 0) << analysis.err;
    return nlohmann::json::parse(analysis.out)["cases"][0]["optimum"];
  };
  ASSERT_EQ(sweep("whole.sqlite", {}, {}).exit_code, 0);
  ASSERT_EQ(sweep("resumed.sqlite", {{"DVFSLAB_TEST_KILL_AFTER_POINTS", "5"}}, {}).exit_code, 128 + 9);
  const auto resumed = sweep("resumed.sqlite", {}, {"--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("already measured before the resume"), std::string::npos) << resumed.out;
  const auto expected = optimum_of("whole.sqlite"), got = optimum_of("resumed.sqlite");
  ASSERT_TRUE(expected.is_object());
  EXPECT_EQ(got["sm_mhz"], expected["sm_mhz"]) << got.dump() << "\n" << expected.dump();
  const double energy = expected["energy_per_item_j"].get<double>();
  EXPECT_NEAR(got["energy_per_item_j"].get<double>(), energy, energy * 1e-9);
}

// L3: the strategies plan within the budget and end when it is spent; only the
// session's own stop (which only the grid meets) used to say so.
TEST_F(SearchCliTest, L3_EveryStrategyTheBudgetCutShortSaysSo) {
  for (const std::string strategy : {"golden", "scan", "model", "coordinate", "auto", "grid"}) {
    const auto result = search({"--device", "sim:v100", "--workload", "resnet50", "--batch", "32", "--knobs",
                                "sm,pl", "--strategy", strategy, "--budget", "3", "--json"},
                               strategy + ".sqlite");
    ASSERT_EQ(result.exit_code, 0) << strategy << ": " << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_TRUE(json["stopped_by_budget"].get<bool>()) << strategy;
    EXPECT_EQ(json["probes"].size(), 3u) << strategy;
  }
}

TEST_F(SearchCliTest, L3_ASearchThatEndsWithinItsBudgetWasNotStoppedByIt) {
  const auto result = search({"--device", "sim:v100", "--workload", "resnet50", "--batch", "32", "--strategy",
                              "golden", "--budget", "1000", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(nlohmann::json::parse(result.out)["stopped_by_budget"].get<bool>()) << result.out;
}

TEST_F(SearchCliTest, L3_ABudgetOfSecondsTooSmallForAnyProbeStillMeasuresTheDefault) {
  const auto result = search({"--device", "sim:v100", "--workload", "resnet50", "--batch", "32",
                              "--budget-seconds", "1e-300", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  ASSERT_EQ(json["probes"].size(), 1u) << result.out;
  EXPECT_TRUE(json["probes"][0]["is_default"].get<bool>());
  EXPECT_TRUE(json["optimum"]["is_default"].get<bool>()) << "the only setting measured";
  EXPECT_TRUE(json["stopped_by_budget"].get<bool>());
}

// L8: a search plans nothing up front, so its progress counted "0 points" and ended
// every line at 100 %.
TEST_F(SearchCliTest, L8_SearchProgressNumbersTheProbesAgainstTheBudget) {
  const auto result =
      search({"--device", "sim:v100", "--workload", "resnet50", "--batch", "32", "--budget", "4"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err.find("0 points"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("[2/2]"), std::string::npos) << "a count that is always complete: " << result.err;
  EXPECT_NE(result.err.find("search on Tesla V100"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("at most 4 probes"), std::string::npos) << result.err;
  for (const char* probe : {"[probe 1 of at most 4] ", "[probe 4 of at most 4] "})
    EXPECT_NE(result.err.find(probe), std::string::npos) << probe << "\n" << result.err;
  EXPECT_EQ(result.err.find("[probe 5"), std::string::npos) << result.err;
}

// L8: --batch defaulted to 1, a batch no built-in workload is measured at.
TEST_F(SearchCliTest, L8_WithoutBatchTheSearchRunsTheWorkloadsDefaultBatch) {
  const auto result = search({"--device", "sim:v100", "--workload", "resnet50", "--budget", "2", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(nlohmann::json::parse(result.out)["workload"], "resnet50 train fp32 b16") << result.out;
}

TEST_F(SearchCliTest, TheDefaultStrategyIsAutoAndNeedsFewerProbesThanTheClocks) {
  const auto result = search({"--device", "sim:v100", "--workload", "resnet50", "--batch", "32", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["strategy"], "auto");
  EXPECT_LE(json["probes"].size(), 20u) << "the V100 has over 180 core clocks";
  EXPECT_FALSE(json["optimum"]["is_default"].get<bool>())
      << "the simulated V100 saves energy below its default clock";
}

TEST_F(SearchCliTest, SweepWithAStrategySearchesOnlyItsShardsCasesAndSaysWhichStrategy) {
  std::ofstream(dir_ / "plan.toml")
      << "[plan]\nname = \"two cases\"\n[knobs]\nsm_mhz = { count = 9 }\n[[cases]]\n"
         "workloads = [\"resnet50\", \"alexnet\"]\nbatch_sizes = [32]\n"
         "[measure]\nwarmup_iterations = 1\ndrift_check = false\n";
  const auto result =
      testing::run_dvfslab({"sweep", (dir_ / "plan.toml").string(), "--device", "sim:v100", "--strategy",
                            "golden", "--shard", "2/2", "--db", (dir_ / "db.sqlite").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("strategy golden"), std::string::npos) << result.out;
  const auto analysis =
      testing::run_dvfslab({"analyze", (dir_ / "db.sqlite").string(), "--json", "--points"});
  ASSERT_EQ(analysis.exit_code, 0) << analysis.err;
  const auto json = nlohmann::json::parse(analysis.out);
  ASSERT_EQ(json["cases"].size(), 1u) << "case 2 of 2 only";
  EXPECT_NE(json["cases"][0].dump().find("alexnet"), std::string::npos);
  EXPECT_LT(json["cases"][0]["points"].size(), 10u)
      << "golden measures fewer than the 9 clocks and the default";
}

TEST_F(SearchCliTest, ReportNumbersTheProbesOfASearchInTheOrderMeasured) {
  std::vector<std::string> arguments = sim_search();
  arguments[9] = "4";  // --budget 4
  ASSERT_EQ(search(arguments).exit_code, 0);
  const auto report =
      testing::run_dvfslab({"report", (dir_ / "db.sqlite").string(), "-o", (dir_ / "r.html").string()});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  std::ifstream in(dir_ / "r.html");
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto table = html.find("<table class=\"probes\">");
  ASSERT_NE(table, std::string::npos) << "the probes table";
  const std::string probes = html.substr(table, html.find("</table>", table) - table);
  for (const char* order : {"<td>1</td>", "<td>2</td>", "<td>3</td>", "<td>4</td>"})
    EXPECT_NE(probes.find(order), std::string::npos) << order << "\n" << probes;
  // Points in setting order (the default's 1245 MHz first, then 150, 142, 135 MHz), numbered as measured.
  EXPECT_NE(html.find("\"probe\":[1,4,3,2]"), std::string::npos) << "the charts' probe column";
}

TEST_F(SearchCliTest, StudyWithAStrategyFindsAnOptimumForEveryCase) {
  const auto result = testing::run_dvfslab(
      {"study", "--device", "sim:v100", "--strategy", "auto", "--out", (dir_ / "study").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("core clock swept by strategy auto"), std::string::npos) << result.out;
  std::ifstream in(dir_ / "study" / "analysis.json");
  const auto analysis = nlohmann::json::parse(in);
  ASSERT_GE(analysis["cases"].size(), 4u);
  for (const auto& study_case : analysis["cases"])
    EXPECT_FALSE(study_case["optimum"].is_null()) << study_case;
}

// The sweep of one case over 12 core clocks of the simulated V100, into `db`.
testing::ProcessResult sweep_of_resnet50(const std::filesystem::path& dir, const std::string& db,
                                         std::vector<std::string> options) {
  std::ofstream(dir / "plan.toml") << "[plan]\nname = \"objective\"\n[knobs]\nsm_mhz = { count = 12 }\n"
                                      "[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = [32]\n"
                                      "[measure]\nrepetitions = 2\ndrift_check = false\n";
  std::vector<std::string> arguments = {"sweep", (dir / "plan.toml").string(), "--device", "sim:v100",
                                        "--db",  (dir / db).string()};
  arguments.insert(arguments.end(), options.begin(), options.end());
  return testing::run_dvfslab(arguments);
}

nlohmann::json analysis_of(const std::filesystem::path& db, const std::string& objective) {
  const auto result = testing::run_dvfslab({"analyze", db.string(), "--objective", objective, "--json"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return nlohmann::json::parse(result.out);
}

// A sweep's strategy searched plain energy whatever the analysis wanted: within a
// 5 % slowdown every clock it probed was too slow, and the answer was the default.
TEST_F(SearchCliTest, SweepObjective_ASweepsStrategySearchesTheObjectiveGivenAndFindsTheGridsSaving) {
  const std::string slowdown = "energy-within-slowdown:5%";
  ASSERT_EQ(sweep_of_resnet50(dir_, "grid.sqlite", {}).exit_code, 0);
  const auto searched =
      sweep_of_resnet50(dir_, "auto.sqlite", {"--strategy", "auto", "--objective", slowdown});
  ASSERT_EQ(searched.exit_code, 0) << searched.err;
  const auto grid = analysis_of(dir_ / "grid.sqlite", slowdown)["cases"][0];
  const auto json = analysis_of(dir_ / "auto.sqlite", slowdown);
  EXPECT_FALSE(json.contains("warnings")) << json.dump();
  const auto found = json["cases"][0];
  ASSERT_GT(grid["energy_saving_pct"].get<double>(), 1.0) << grid.dump();
  EXPECT_EQ(found["optimum"]["sm_mhz"], grid["optimum"]["sm_mhz"]) << found.dump();
  EXPECT_NEAR(found["energy_saving_pct"].get<double>(), grid["energy_saving_pct"].get<double>(), 1.0);
}

TEST_F(SearchCliTest, SweepObjective_AnalyzeWarnsWhenItsObjectiveIsNotTheOneTheRunSearched) {
  ASSERT_EQ(sweep_of_resnet50(dir_, "db.sqlite", {"--strategy", "golden"}).exit_code, 0);
  const auto same = testing::run_dvfslab({"analyze", (dir_ / "db.sqlite").string()});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.err.find("warning"), std::string::npos) << "golden searched energy: " << same.err;

  const auto other = testing::run_dvfslab({"analyze", (dir_ / "db.sqlite").string(), "--objective", "edp"});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(lines(other.err), 1u) << other.err;
  EXPECT_NE(other.err.find("dvfslab: warning: run 1 (golden for energy)"), std::string::npos) << other.err;
  EXPECT_NE(other.err.find("--objective edp"), std::string::npos) << other.err;
  const auto json = analysis_of(dir_ / "db.sqlite", "edp");
  ASSERT_EQ(json["warnings"].size(), 1u) << json.dump();
  EXPECT_NE(json["warnings"][0].get<std::string>().find("run 1"), std::string::npos);

  // A grid run measured every setting, for any objective.
  ASSERT_EQ(sweep_of_resnet50(dir_, "grid.sqlite", {}).exit_code, 0);
  EXPECT_FALSE(analysis_of(dir_ / "grid.sqlite", "edp").contains("warnings"));
  const auto without_strategy = sweep_of_resnet50(dir_, "refused.sqlite", {"--objective", "edp"});
  EXPECT_EQ(without_strategy.exit_code, 2) << without_strategy.err;
  const auto unknown =
      sweep_of_resnet50(dir_, "refused.sqlite", {"--strategy", "golden", "--objective", "x"});
  EXPECT_EQ(unknown.exit_code, 3) << unknown.err;
}

TEST_F(SearchCliTest, SweepObjective_AStudysStrategySearchesAndAnalysesTheObjectiveGiven) {
  const auto result = testing::run_dvfslab({"study", "--device", "sim:v100", "--strategy", "golden",
                                            "--objective", "edp", "--out", (dir_ / "study").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::ifstream in(dir_ / "study" / "analysis.json");
  EXPECT_EQ(nlohmann::json::parse(in)["objective"], "edp");
  const auto analysis = testing::run_dvfslab(
      {"analyze", (dir_ / "study" / "dvfslab.sqlite").string(), "--objective", "edp", "--json"});
  ASSERT_EQ(analysis.exit_code, 0) << analysis.err;
  EXPECT_EQ(analysis.err.find("warning"), std::string::npos) << "the study searched EDP: " << analysis.err;
}

TEST_F(SearchCliTest, SweepAndStudyRefuseAnUnknownStrategyWithExit2) {
  for (const std::vector<std::string>& arguments :
       {std::vector<std::string>{"sweep", "plan.toml", "--strategy", "no-such"},
        std::vector<std::string>{"study", "--device", "sim:v100", "--strategy", "no-such"}}) {
    const auto result = testing::run_dvfslab(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments.front() << ": " << result.err;
    EXPECT_EQ(lines(result.err), 1u) << result.err;
    EXPECT_NE(result.err.find("choose one of: grid"), std::string::npos) << result.err;
  }
}

}  // namespace
}  // namespace dvfslab
