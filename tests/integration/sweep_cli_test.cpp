// dvfslab sweep on simulated GPUs, through the real binary: a whole sweep, kill -9
// and --resume, shards, dry runs and bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <tuple>

#include "dvfslab/store.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

using testing::run_dvfslab;

const char* const small_plan = R"([knobs]
sm_mhz = { count = 4, min = 600 }

[[cases]]
workloads = ["resnet50"]
modes = ["train"]
batch_sizes = [16, 32]

[[cases]]
workloads = ["alexnet"]
modes = ["infer"]
batch_sizes = [256]

[measure]
duration_s = 2.0
repetitions = 2
drift_every = 4
)";

class SweepCliTest : public ::testing::Test {
 protected:
  std::string write_plan(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  std::string db(const std::string& name) const { return (dir_ / name).string(); }

  testing::ProcessResult sweep(const std::vector<std::string>& extra,
                               const testing::EnvironmentChanges& env = {}) {
    std::vector<std::string> arguments = {"sweep", plan_, "--device", "sim:v100"};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    testing::EnvironmentChanges environment = {{"DVFSLAB_READ_ONLY", std::nullopt},
                                               {"DVFSLAB_TEST_KILL_AFTER_POINTS", std::nullopt}};
    for (const auto& [name, value] : env) environment[name] = value;
    return run_dvfslab(arguments, environment);
  }

  testing::ScratchDir scratch_;
  const std::filesystem::path dir_ = scratch_.path();
  std::string plan_ = write_plan("plan.toml", small_plan);
};

using Key = std::tuple<Case, Setting, int>;

// The simulated energy counter advances once per sensor period (0.1 s), so a window's
// counter energy can be one period's energy off depending on where the window falls
// between updates: runs measuring a point at other moments agree to ~period / window.
constexpr double counter_tolerance = 1.5 * 0.1 / 2.0;

// Every grid measurement's energy per iteration, failing on a duplicate point.
std::map<Key, double> table(const std::string& path) {
  Store store = Store::open_existing(path);
  std::map<Key, double> out;
  for (const auto& row : store.result_rows()) {
    const bool fresh =
        out.emplace(Key{row.workload_case, row.setting, row.repetition}, row.energy_per_iteration_j).second;
    EXPECT_TRUE(fresh) << "duplicate point " << to_string(row.workload_case) << " " << to_string(row.setting);
  }
  return out;
}

void expect_same_table(const std::map<Key, double>& expected, const std::map<Key, double>& actual) {
  ASSERT_EQ(actual.size(), expected.size());
  for (const auto& [key, energy] : expected) {
    ASSERT_EQ(actual.count(key), 1u) << "lost point " << to_string(std::get<0>(key)) << " "
                                     << to_string(std::get<1>(key));
    EXPECT_NEAR(actual.at(key), energy, counter_tolerance * energy);
  }
}

TEST_F(SweepCliTest, WholeSweepOnASimulatedGpu) {
  const auto result = sweep({"--db", db("whole.sqlite")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("SIMULATED"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find("sweep: 20 points (15 of the grid, 5 drift checks) on Tesla V100"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("[20/20]"), std::string::npos) << "plain progress lines when not on a terminal";
  // 3 cases × (default + 4 clocks) × 2 repetitions.
  EXPECT_EQ(table(db("whole.sqlite")).size(), 30u);
}

TEST_F(SweepCliTest, KillNineMidSweepThenResumeGivesTheUninterruptedTable) {
  ASSERT_EQ(sweep({"--db", db("whole.sqlite")}).exit_code, 0);
  const auto killed = sweep({"--db", db("resumed.sqlite")}, {{"DVFSLAB_TEST_KILL_AFTER_POINTS", "7"}});
  ASSERT_EQ(killed.exit_code, 128 + 9) << killed.err;
  const auto partial = table(db("resumed.sqlite"));
  EXPECT_GT(partial.size(), 0u);
  EXPECT_LT(partial.size(), 30u);

  const auto resumed = sweep({"--db", db("resumed.sqlite"), "--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("already measured"), std::string::npos) << resumed.err;
  expect_same_table(table(db("whole.sqlite")), table(db("resumed.sqlite")));
  EXPECT_EQ(Store::open_existing(db("resumed.sqlite")).runs().size(), 1u)
      << "the resume continues the same run";
}

TEST_F(SweepCliTest, ShardsMergedEqualTheUnshardedRun) {
  ASSERT_EQ(sweep({"--db", db("whole.sqlite")}).exit_code, 0);
  std::vector<std::string> merge = {"merge", db("merged.sqlite")};
  std::size_t shard_points = 0;
  for (const char* shard : {"1/2", "2/2"}) {
    const std::string path = db(std::string("shard") + shard[0] + ".sqlite");
    ASSERT_EQ(sweep({"--db", path, "--shard", shard}).exit_code, 0);
    shard_points += table(path).size();
    merge.push_back(path);
  }
  const auto merged = run_dvfslab(merge);
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_EQ(shard_points, 30u) << "the shards partition the grid";
  expect_same_table(table(db("whole.sqlite")), table(db("merged.sqlite")));
}

TEST_F(SweepCliTest, DryRunListsThePointsAndTheTimeAndMeasuresNothing) {
  const auto result = sweep({"--db", db("dry.sqlite"), "--dry-run"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("20 points (15 of the grid, 5 drift checks)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("resnet50 train fp32 b16"), std::string::npos);
  EXPECT_NE(result.out.find("Estimated time:"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(db("dry.sqlite")));
}

// The study's way of measuring (5 warm-up iterations, 1 s windows, 2–5 repetitions
// to a 2 % interval, 1 s settle, drift checks) on two of its cases.
const char* const study_like_plan = R"([knobs]
sm_mhz = { count = 12, min = 460 }

[[cases]]
workloads = ["alexnet"]
batch_sizes = [128]

[[cases]]
workloads = ["vgg16"]
batch_sizes = [16]

[measure]
warmup_iterations = 5
duration_s = 1.0
repetitions = 2
max_repetitions = 5
ci_target_pct = 2.0
settle_s = 1.0
seed = 2019
drift_every = 25
)";

// "1 h 02 min", "3 min 20 s" or "12 s" as seconds.
double seconds_of(const std::string& text) {
  std::smatch match;
  if (std::regex_search(text, match, std::regex(R"((\d+) h (\d+) min)")))
    return 3600.0 * std::stod(match[1]) + 60.0 * std::stod(match[2]);
  if (std::regex_search(text, match, std::regex(R"((\d+) min (\d+) s)")))
    return 60.0 * std::stod(match[1]) + std::stod(match[2]);
  if (std::regex_search(text, match, std::regex(R"((\d+) s)"))) return std::stod(match[1]);
  ADD_FAILURE() << "no duration in " << text;
  return 0;
}

// The estimate left the warm-up iterations out: two thirds of the study's GPU time.
TEST_F(SweepCliTest, DryRunEstimate_IsTheSimulatedGpuTimeWithinThreePercent) {
  plan_ = write_plan("study-like.toml", study_like_plan);
  const auto dry = sweep({"--db", db("dry.sqlite"), "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  std::smatch estimate;
  ASSERT_TRUE(std::regex_search(dry.out, estimate, std::regex("Estimated time: ([^,]+),"))) << dry.out;
  EXPECT_NE(dry.out.find("warm-up included"), std::string::npos) << dry.out;

  const auto run = sweep({"--db", db("run.sqlite")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::smatch measured;
  ASSERT_TRUE(std::regex_search(run.out, measured, std::regex(R"(([0-9]+) s of simulated GPU time)")))
      << run.out;
  const double gpu_seconds = std::stod(measured[1]);
  EXPECT_NEAR(seconds_of(estimate[1]), gpu_seconds, 0.03 * gpu_seconds) << dry.out << run.out;
}

struct BadInput {
  const char* name;
  std::string plan;
  int exit_code;
  std::string message;
};

TEST_F(SweepCliTest, BadInputIsOneClearLineAndChangesNothing) {
  const std::string cases = "\n[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = [16]\n";
  const std::vector<BadInput> inputs = {
      {"unknown workload", "[[cases]]\nworkloads = [\"resnet5O\"]\nbatch_sizes = [16]\n", 3,
       "unknown workload 'resnet5O' for Tesla V100"},
      {"unknown knob", "[knobs]\ncore_mhz = 900\n" + cases, 3,
       "plan.toml:2:12: unknown key 'core_mhz' in [knobs]: valid keys are sm_mhz, mem_mhz, power_limit_w"},
      {"unsupported clock", "[knobs]\nsm_mhz = [1000]\n" + cases, 3, "SM clock 1000 MHz is not supported"},
      {"power limit", "[knobs]\npower_limit_w = [400]\n" + cases, 3, "power limit 400 W is outside"},
      {"malformed", "[knobs\nsm_mhz = 900\n" + cases, 3, "plan.toml:1:"},
  };
  for (const auto& input : inputs) {
    plan_ = write_plan("plan.toml", input.plan);
    const auto result = sweep({"--db", db("bad.sqlite")});
    EXPECT_EQ(result.exit_code, input.exit_code) << input.name << ": " << result.err;
    EXPECT_NE(result.err.find(input.message), std::string::npos) << input.name << ": " << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << input.name << ": " << result.err;
    EXPECT_FALSE(std::filesystem::exists(db("bad.sqlite"))) << input.name;
  }
}

TEST_F(SweepCliTest, ReadOnlyRefusesClockChangesButRunsADefaultOnlyPlan) {
  const auto refused = sweep({"--db", db("ro.sqlite")}, {{"DVFSLAB_READ_ONLY", "1"}});
  EXPECT_EQ(refused.exit_code, 5) << refused.err;
  EXPECT_NE(refused.err.find("DVFSLAB_READ_ONLY"), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(db("ro.sqlite")));

  plan_ = write_plan("default.toml", "[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = [16, 32]\n");
  const auto default_only = sweep({"--db", db("ro.sqlite")}, {{"DVFSLAB_READ_ONLY", "1"}});
  ASSERT_EQ(default_only.exit_code, 0) << default_only.err;
  EXPECT_EQ(table(db("ro.sqlite")).size(), 2u);
}

}  // namespace
}  // namespace dvfslab
