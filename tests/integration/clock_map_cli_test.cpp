// `dvfslab clock-map` and `dvfslab search --clock-map` end to end on the published
// dense V100-SXM2 set: the map learned from the other workloads guides `auto` on the
// one left out; `dvfslab tune --clock-map` on a simulated GPU probes where a map
// predicts a dip; and every input that cannot be used is one line with its exit code.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

using testing::run_dvfslab;

const std::string dense_table = std::string(DVFSLAB_SHARED_DATA_DIR) + "/v100sxm2-sycl-microbench-core.csv";
const std::string short_table = std::string(DVFSLAB_SHARED_DATA_DIR) + "/v100-kernels-core.csv";
const std::string left_out = "ArithLocalMixed_8_1_1_1_1_1_1_0/n65536/it20000";

// The dense table without one workload's rows: what the map may learn from.
std::filesystem::path table_without(const testing::ScratchDir& scratch, const std::string& workload) {
  const auto path = scratch / "others.csv";
  std::ifstream in(dense_table);
  std::ofstream out(path);
  for (std::string line; std::getline(in, line);) {
    if (line.find("," + workload + ",") == std::string::npos) out << line << "\n";
  }
  return path;
}

// `arguments` with the clock map given.
std::vector<std::string> with_clock_map(std::vector<std::string> arguments,
                                        const std::filesystem::path& map_file) {
  arguments.insert(arguments.end(), {"--clock-map", map_file.string()});
  return arguments;
}

std::size_t lines_of(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(ClockMapCli, TheMapOfOtherWorkloadsGuidesAutoOnTheOneLeftOut) {
  testing::ScratchDir scratch;
  const auto others = table_without(scratch, left_out);
  const auto map_file = scratch / "map.json";
  const auto learned = run_dvfslab({"clock-map", others.string(), "-o", map_file.string()});
  ASSERT_EQ(learned.exit_code, 0) << learned.err;
  EXPECT_NE(learned.err.find("clock map of Tesla V100-SXM2-16GB: 140 settings from 86 workloads' lines"),
            std::string::npos)
      << learned.err;
  std::ifstream map_in(map_file);
  const auto map = nlohmann::json::parse(map_in);
  EXPECT_EQ(map.at("format"), "dvfslab-clock-map");
  EXPECT_EQ(map.at("settings").size(), 140u);

  const std::vector<std::string> search = {
      "search", "--device", "replay:" + dense_table,         "--workload", left_out,
      "--json", "--db",     (scratch / "db.sqlite").string()};
  const auto guided = run_dvfslab(with_clock_map(search, map_file));
  ASSERT_EQ(guided.exit_code, 0) << guided.err;
  EXPECT_NE(guided.err.find("with the clock map of Tesla V100-SXM2-16GB"), std::string::npos) << guided.err;
  const auto unguided = run_dvfslab(search);
  ASSERT_EQ(unguided.exit_code, 0) << unguided.err;
  const auto guided_json = nlohmann::json::parse(guided.out);
  const auto unguided_json = nlohmann::json::parse(unguided.out);
  // The default, the coarse subset's 8 settings spread over the line, 3 predicted.
  EXPECT_EQ(guided_json.at("probes").size(), 12u);
  EXPECT_GT(unguided_json.at("probes").size(), 12u);
}

// A database of earlier sweeps gives the same map as the table they are in.
TEST(ClockMapCli, ADatabaseGivesTheMapItsTableGives) {
  testing::ScratchDir scratch;
  const auto db = (scratch / "sweeps.sqlite").string();
  ASSERT_EQ(run_dvfslab({"import", dense_table, "--db", db}).exit_code, 0);
  const auto from_db = run_dvfslab({"clock-map", db});
  const auto from_table = run_dvfslab({"clock-map", dense_table});
  ASSERT_EQ(from_db.exit_code, 0) << from_db.err;
  ASSERT_EQ(from_table.exit_code, 0) << from_table.err;
  const auto a = nlohmann::json::parse(from_db.out);
  const auto b = nlohmann::json::parse(from_table.out);
  EXPECT_EQ(a.at("lines"), b.at("lines"));
  ASSERT_EQ(a.at("settings").size(), b.at("settings").size());
  for (std::size_t i = 0; i < a.at("settings").size(); ++i)
    EXPECT_NEAR(a.at("settings")[i].at("factor").get<double>(),
                b.at("settings")[i].at("factor").get<double>(), 1e-12);
}

// The points a sweep's summary line says it measured; -1 when it says none.
int points_measured(const std::string& out) {
  std::smatch match;
  return std::regex_search(out, match, std::regex(": ([0-9]+) points measured")) ? std::stoi(match[1]) : -1;
}

// `sweep --strategy auto --clock-map` searches each case of a plan with the map: 12
// settings of a workload's 140, as `search` does.
TEST(ClockMapCli, ASweepWithAutoSearchesEachCaseWithTheMap) {
  testing::ScratchDir scratch;
  const auto others = table_without(scratch, left_out);
  const auto map_file = scratch / "map.json";
  ASSERT_EQ(run_dvfslab({"clock-map", others.string(), "-o", map_file.string()}).exit_code, 0);
  const auto plan = scratch / "plan.toml";
  std::ofstream(plan) << "[knobs]\nsm_mhz = \"all\"\n\n[[cases]]\nworkloads = [\"" << left_out
                      << "\"]\nbatch_sizes = [1]\n\n[measure]\nrepetitions = 2\ndrift_check = false\n";
  const auto sweep = [&](const std::string& strategy, std::vector<std::string> extra, const std::string& db) {
    std::vector<std::string> arguments = {"sweep",      plan.string(), "--device", "replay:" + dense_table,
                                          "--strategy", strategy,      "--db",     (scratch / db).string()};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return run_dvfslab(arguments);
  };
  const auto guided = sweep("auto", {"--clock-map", map_file.string()}, "guided.sqlite");
  ASSERT_EQ(guided.exit_code, 0) << guided.err;
  EXPECT_NE(guided.err.find("with the clock map of Tesla V100-SXM2-16GB"), std::string::npos) << guided.err;
  const auto unguided = sweep("auto", {}, "unguided.sqlite");
  ASSERT_EQ(unguided.exit_code, 0) << unguided.err;
  // The 12 settings (one of them proposed again to confirm it) against the descents'.
  EXPECT_NE(guided.out.find(": 13 points measured"), std::string::npos) << guided.out;
  EXPECT_LT(points_measured(guided.out), points_measured(unguided.out)) << unguided.out;
  const auto grid = sweep("grid", {"--clock-map", map_file.string()}, "grid.sqlite");
  EXPECT_EQ(grid.exit_code, 2) << grid.err;
  EXPECT_NE(grid.err.find("guides --strategy auto, not grid"), std::string::npos) << grid.err;
}

// A map of the simulated V100 whose every SM clock is as its neighbours but 1005 MHz,
// `dip` times their energy (the simulator's own lines are smooth: a map of them would
// be flat, as one with a dip of 1 is).
std::filesystem::path sim_v100_map_with_a_dip(const testing::ScratchDir& scratch, double dip = 0.9) {
  const auto info = run_dvfslab({"info", "--device", "sim:v100", "--json"});
  EXPECT_EQ(info.exit_code, 0) << info.err;
  const auto device = nlohmann::json::parse(info.out).at("devices").at(0);
  nlohmann::json settings = nlohmann::json::array();
  for (const int mhz : device.at("clocks").at("graphics_mhz").at("877").get<std::vector<int>>()) {
    settings.push_back(
        {{"sm_mhz", mhz}, {"mem_mhz", 877}, {"power_limit_w", nullptr}, {"factor", mhz == 1005 ? dip : 1.0}});
  }
  const auto path = scratch / fmt::format("sim-v100-map-{}.json", dip);
  std::ofstream(path) << nlohmann::json{{"format", "dvfslab-clock-map"}, {"version", 1},
                                        {"gpu", device.at("name")},      {"lines", 5},
                                        {"factor_noise", 0.001},         {"settings", settings}}
                             .dump();
  return path;
}

std::vector<int> probed_sm_clocks(const std::string& tune_json) {
  std::vector<int> clocks;
  const auto report = nlohmann::json::parse(tune_json);
  for (const auto& probe : report.at("probes"))
    if (!probe.at("setting").at("sm_mhz").is_null()) clocks.push_back(probe.at("setting").at("sm_mhz"));
  return clocks;
}

// The tuner given the map has every SM clock from 40 % up to choose from and probes the
// line as auto does: the default (read for the top clock), 7 more spread clocks and
// the 3 the map predicts cheapest, the dip among them; without it, golden section over 24 clocks never meets
// 1005 MHz. A flat map guides nothing: the tuner probes as it does without one.
TEST(ClockMapCli, TuneWithTheMapProbesWhereItPredictsTheDip) {
  testing::ScratchDir scratch;
  const auto map_file = sim_v100_map_with_a_dip(scratch);
  const std::vector<std::string> tune = {"tune",
                                         "--device",
                                         "sim:v100",
                                         "--sim-job",
                                         "resnet50/train:4000",
                                         "--json",
                                         "--db",
                                         (scratch / "tune.sqlite").string()};
  const auto guided = run_dvfslab(with_clock_map(tune, map_file));
  ASSERT_EQ(guided.exit_code, 0) << guided.err;
  EXPECT_NE(guided.err.find("with the clock map of Tesla V100-PCIE-16GB"), std::string::npos) << guided.err;
  const auto unguided = run_dvfslab(tune);
  ASSERT_EQ(unguided.exit_code, 0) << unguided.err;
  const auto guided_clocks = probed_sm_clocks(guided.out);
  const auto unguided_clocks = probed_sm_clocks(unguided.out);
  EXPECT_EQ(guided_clocks.size(), 10u) << "7 spread and 3 predicted, besides the default (the top clock's)";
  EXPECT_EQ(std::find(guided_clocks.begin(), guided_clocks.end(), 1380), guided_clocks.end());
  EXPECT_NE(std::find(guided_clocks.begin(), guided_clocks.end(), 1005), guided_clocks.end());
  EXPECT_EQ(std::find(unguided_clocks.begin(), unguided_clocks.end(), 1005), unguided_clocks.end());
  const auto flat = run_dvfslab(with_clock_map(tune, sim_v100_map_with_a_dip(scratch, 1.0)));
  ASSERT_EQ(flat.exit_code, 0) << flat.err;
  EXPECT_EQ(probed_sm_clocks(flat.out), unguided_clocks);
}

TEST(ClockMapCli, WhatCannotGiveOrUseAMapIsOneLineWithItsExitCode) {
  testing::ScratchDir scratch;
  const auto map_file = scratch / "map.json";
  ASSERT_EQ(run_dvfslab({"clock-map", dense_table, "-o", map_file.string()}).exit_code, 0);
  const auto sim_map = sim_v100_map_with_a_dip(scratch);
  const auto garbage = scratch / "garbage.json";
  std::ofstream(garbage) << "{\"format\": \"dvfslab-model\"}";
  const auto db = (scratch / "db.sqlite").string();
  const std::vector<std::string> search = {
      "search", "--device", "replay:" + dense_table, "--workload", left_out, "--db", db};
  const auto with = [&](std::vector<std::string> extra) {
    auto arguments = search;
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return arguments;
  };
  const auto tune_with = [&](std::vector<std::string> extra, const std::string& device = "sim:v100",
                             const std::filesystem::path& map = {}) {
    std::vector<std::string> arguments = {
        "tune",      "--device",           device,
        "--sim-job", "resnet50/train:400", "--db",
        db,          "--clock-map",        (map.empty() ? sim_map : map).string()};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return arguments;
  };
  struct Case {
    std::vector<std::string> arguments;
    int exit_code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"clock-map", short_table}, 3, "at least two workloads' lines of 30 or more settings"},
      {{"clock-map", (scratch / "missing.csv").string()}, 3, "missing.csv"},
      {{"clock-map", dense_table, "--gpu", "Tesla P100"}, 3, "no GPU 'Tesla P100'"},
      {{"clock-map", dense_table, "-o", dense_table}, 3, "input"},
      {{"clock-map", dense_table, "-o", ""}, 3, ""},
      {with({"--clock-map", map_file.string(), "--strategy", "golden"}), 2, "guides --strategy auto"},
      {with({"--clock-map", map_file.string(), "--objective", "edp"}), 2, "not edp"},
      {with({"--clock-map", garbage.string()}), 3, "is not a clock map"},
      {with({"--clock-map", (scratch / "none.json").string()}), 3, "does not exist"},
      {with({"--clock-map", ""}), 3, "does not exist"},
      {with({"--clock-map", scratch.path().string()}), 3, "is a directory"},
      {{"search", "--device", "replay:" + short_table, "--workload", "BlackScholes/BlackScholesGPU/input000",
        "--db", db, "--clock-map", map_file.string()},
       3,
       "is a map of Tesla V100-SXM2-16GB, not of Tesla V100 PCIe"},
      {tune_with({"--strategy", "golden"}), 2, "guides --strategy online or auto, not golden"},
      {tune_with({"--knobs", "pl"}), 3, "guides the search of SM clocks: tune the knob sm"},
      {tune_with({"--knobs", "profile"}), 3, "guides the search of SM clocks: tune the knob sm"},
      {tune_with({"--objective", "edp"}), 2, "not edp"},
      {tune_with({}, "sim:h200"), 3, "is a map of Tesla V100-PCIE-16GB, not of NVIDIA H200"},
      {tune_with({}, "sim:v100", garbage), 3, "is not a clock map"},
  };
  for (const Case& c : cases) {
    const auto result = run_dvfslab(c.arguments);
    EXPECT_EQ(result.exit_code, c.exit_code) << c.arguments.back() << ": " << result.err;
    EXPECT_EQ(lines_of(result.err), 1u) << result.err;
    EXPECT_NE(result.err.find(c.says), std::string::npos) << result.err;
  }
  EXPECT_FALSE(std::filesystem::exists(db)) << "no search ran";
}

}  // namespace
}  // namespace dvfslab
