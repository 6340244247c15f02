// dvfslab tune on the fake NVML: a job that paces itself by the fake GPU's locked
// SM clock (its state file) is tuned and the GPU restored however it ends — at its
// end, on SIGINT / SIGTERM to dvfslab, when the job itself is killed, and after
// SIGKILL of dvfslab (journal, then `dvfslab restore`). The fake's setter log and
// state file are the evidence. Also read-only refusal and bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

using testing::EnvironmentChanges;

// One iteration of 8 items every PACE_US (default 20,000) microseconds at the
// H200's top clock, slower in proportion at a lower locked SM clock (read from the fake's state file); with
// SIGNAL_AT=N it sends SIGNAL_NAME to SIGNAL_TARGET (parent: dvfslab, self: the job)
// at its N-th iteration. It ends after ITERS iterations, or with 130 / 143 on SIGINT /
// SIGTERM, as a training script does (bash alone would wait for its `sleep`); with
// IGNORE_TERM=1 it ignores SIGTERM.
const char* const paced_job =
    "trap 'exit 130' INT; trap 'exit 143' TERM; if [ \"$IGNORE_TERM\" = 1 ]; then trap '' TERM; fi; n=0; "
    "while [ $n -lt ${ITERS:-30} ]; do mhz=1980; "
    "while read -r line; do if [[ $line =~ locked_sm_max_mhz[^0-9n]*([0-9]+) ]]; then "
    "mhz=${BASH_REMATCH[1]}; fi; "
    "done < \"$DVFSLAB_FAKE_NVML_STATE\"; "
    "printf -v pause '0.%06d' $((${PACE_US:-20000} * 1980 / mhz)); sleep $pause; n=$((n+1)); "
    "echo \"dvfslab:iter 1 items 8\" >&$DVFSLAB_MARK_FD; "
    "if [ \"$n\" = \"${SIGNAL_AT:-0}\" ]; then "
    "if [ \"$SIGNAL_TARGET\" = self ]; then kill -$SIGNAL_NAME $$; else kill -$SIGNAL_NAME $PPID; fi; fi; "
    "done";

class FakeNvmlTuneTest : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(dir_ / "state"); }

  EnvironmentChanges environment(EnvironmentChanges extra = {}) const {
    extra["DVFSLAB_FAKE_NVML_LOG"] = log_path();
    extra["DVFSLAB_FAKE_NVML_STATE"] = (dir_ / "gpu-state.json").string();
    extra["DVFSLAB_STATE_DIR"] = (dir_ / "state").string();
    return testing::fake_nvml_environment("h200", std::move(extra));
  }

  // Windows of 3 iterations after 2 of warm-up unless `extra` sets them.
  testing::ProcessResult tune(EnvironmentChanges env = {}, std::vector<std::string> extra = {}) {
    std::vector<std::string> arguments = {"tune", "--device", "0", "--db", (dir_ / "db.sqlite").string()};
    if (std::find(extra.begin(), extra.end(), "--probe-iters") == extra.end()) {
      for (const char* word : {"--warmup-iters", "2", "--probe-iters", "3"}) arguments.emplace_back(word);
    }
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    for (const char* word : {"--", "bash", "-c", paced_job}) arguments.emplace_back(word);
    return testing::run_process_with_limit(DVFSLAB_BINARY, arguments, environment(std::move(env)),
                                           std::chrono::seconds(60));
  }

  std::string log_path() const { return (dir_ / "setters.log").string(); }
  std::string read(const std::filesystem::path& path) const {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::string log() const { return read(log_path()); }
  // The SM clock is locked in the fake GPU's state as the last process left it.
  bool sm_locked_in_state() const {
    return read(dir_ / "gpu-state.json").find("\"locked_sm_max_mhz\": null") == std::string::npos;
  }
  bool journal_exists() const { return testing::restore_journal_in(dir_ / "state"); }

  testing::ScratchDir scratch_;
  const std::filesystem::path dir_ = scratch_.path();
};

TEST_F(FakeNvmlTuneTest, APacedJobIsProbedAndTheGpuRestoredAtItsEnd) {
  // 60 ms iterations: the loop's own cost (a fork per iteration) grows on a loaded
  // machine and must stay small beside the pause whose ratio this test checks.
  const auto result = tune({{"PACE_US", "60000"}}, {"--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string calls = log();
  EXPECT_NE(calls.find("nvmlDeviceSetGpuLockedClocks"), std::string::npos) << calls;
  const auto report = nlohmann::json::parse(result.out);
  // The job follows the GPU's setting: the slowest clock probed runs its iterations slower.
  double default_time = 0;
  double slowest_clock_time = 0;
  int slowest_clock = 1 << 30;
  for (const auto& probe : report.at("probes")) {
    const double time = probe.at("duration_s").get<double>() / probe.at("iterations").get<double>();
    const auto& sm = probe.at("setting").at("sm_mhz");
    if (sm.is_null())
      default_time = time;
    else if (sm.get<int>() < slowest_clock) {
      slowest_clock = sm.get<int>();
      slowest_clock_time = time;
    }
  }
  ASSERT_LT(slowest_clock, 1400) << result.out;
  EXPECT_GT(slowest_clock_time, default_time * 1.2) << result.out;
  EXPECT_GT(report.at("probe_iterations").get<int>(), 6) << result.out;
  EXPECT_EQ(report.at("exit").at("code").get<int>(), 0) << result.out;
  EXPECT_FALSE(sm_locked_in_state()) << calls;
  EXPECT_FALSE(journal_exists());
}

TEST_F(FakeNvmlTuneTest, SigintAndSigtermToDvfslabReachTheJobAndRestoreTheGpu) {
  for (const auto& [signal_name, exit_code] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    std::filesystem::remove(log_path());
    // Iterations 6-8 and 9-11 probe two locked SM clocks (after the warm-up and the default).
    const auto result =
        tune({{"SIGNAL_AT", "10"}, {"SIGNAL_NAME", signal_name}, {"SIGNAL_TARGET", "parent"}});
    EXPECT_EQ(result.exit_code, exit_code) << signal_name << ": " << result.err;
    const std::string calls = log();
    EXPECT_NE(calls.find("nvmlDeviceSetGpuLockedClocks"), std::string::npos) << signal_name << ": " << calls;
    EXPECT_FALSE(sm_locked_in_state()) << signal_name << ": " << calls;
    EXPECT_NE(result.err.find("passed on"), std::string::npos) << result.err;
    EXPECT_FALSE(journal_exists()) << signal_name;
  }
}

TEST_F(FakeNvmlTuneTest, SigtermWhileTuningClockAndPowerLimitRestoresBoth) {
  // The online search turns the SM clock first, then the power limit: a longer job
  // reaches the power-limit probes before the signal.
  const auto result =
      tune({{"SIGNAL_AT", "45"}, {"SIGNAL_NAME", "TERM"}, {"SIGNAL_TARGET", "parent"}, {"ITERS", "60"}},
           {"--knobs", "sm,pl", "--warmup-iters", "0", "--probe-iters", "1", "--settle-iters", "0"});
  EXPECT_EQ(result.exit_code, 143) << result.err;
  const std::string calls = log();
  EXPECT_NE(calls.find("nvmlDeviceSetPowerManagementLimit"), std::string::npos) << calls;
  EXPECT_FALSE(sm_locked_in_state()) << calls;
  EXPECT_NE(read(dir_ / "gpu-state.json").find("\"power_limit_w\": 700.0"), std::string::npos) << calls;
  EXPECT_FALSE(journal_exists());
}

TEST_F(FakeNvmlTuneTest, AJobKilledBySigintSigtermOrSigkillLeavesTheGpuRestored) {
  for (const auto& [signal_name, exit_code] :
       {std::pair{"INT", 130}, std::pair{"TERM", 143}, std::pair{"KILL", 137}}) {
    std::filesystem::remove(log_path());
    const auto result = tune({{"SIGNAL_AT", "10"}, {"SIGNAL_NAME", signal_name}, {"SIGNAL_TARGET", "self"}});
    EXPECT_EQ(result.exit_code, exit_code) << signal_name << ": " << result.err;
    const std::string calls = log();
    EXPECT_NE(calls.find("nvmlDeviceSetGpuLockedClocks"), std::string::npos) << signal_name << ": " << calls;
    EXPECT_FALSE(sm_locked_in_state()) << signal_name << ": " << calls;
    EXPECT_FALSE(journal_exists()) << signal_name;
  }
}

TEST_F(FakeNvmlTuneTest, L9_AJobIgnoringSigtermGetsAReportOfTheRestoreDoneAtTheSignal) {
  const EnvironmentChanges job = {
      {"SIGNAL_AT", "10"}, {"SIGNAL_NAME", "TERM"}, {"SIGNAL_TARGET", "parent"}, {"IGNORE_TERM", "1"}};
  const auto result = tune(job);
  EXPECT_EQ(result.exit_code, 0) << "the job's own code: " << result.err;
  EXPECT_NE(log().find("nvmlDeviceSetGpuLockedClocks"), std::string::npos) << "locked before the signal";
  EXPECT_FALSE(sm_locked_in_state()) << log();
  EXPECT_NE(result.err.find("restored     when the signal arrived, while the job ran on: "),
            std::string::npos)
      << result.err;
  EXPECT_EQ(result.err.find("nothing to restore"), std::string::npos) << result.err;

  const auto json = tune(job, {"--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto report = nlohmann::json::parse(json.out);
  EXPECT_TRUE(report.at("restored_when_stopped").get<bool>()) << json.out;
  EXPECT_FALSE(report.at("restore_actions").empty()) << json.out;
}

TEST_F(FakeNvmlTuneTest, AfterSigkillOfDvfslabRestoreUsesTheJournal) {
  const auto killed = tune({{"SIGNAL_AT", "10"}, {"SIGNAL_NAME", "KILL"}, {"SIGNAL_TARGET", "parent"}});
  ASSERT_EQ(killed.exit_code, 137) << killed.err;
  EXPECT_TRUE(sm_locked_in_state()) << "killed with the clock locked: " << log();
  ASSERT_TRUE(journal_exists());
  const auto restored = testing::run_dvfslab({"restore"}, environment());
  EXPECT_EQ(restored.exit_code, 0) << restored.err;
  EXPECT_FALSE(sm_locked_in_state()) << log();
  EXPECT_FALSE(journal_exists());
}

TEST_F(FakeNvmlTuneTest, ReadOnlyModeRefusesBeforeTheJobStarts) {
  const std::filesystem::path started = dir_ / "started";
  const auto result =
      testing::run_dvfslab({"tune", "--device", "0", "--", "bash", "-c", "touch " + started.string()},
                           environment({{"DVFSLAB_READ_ONLY", "1"}}));
  EXPECT_EQ(result.exit_code, 5) << result.err;
  EXPECT_NE(result.err.find("read-only mode (DVFSLAB_READ_ONLY=1)"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(started)) << "the job must not start";
  EXPECT_FALSE(std::filesystem::exists(log_path())) << "no setter may be called";
}

// The power limits the tuner set, in W, from the fake's setter log.
std::vector<double> power_limits_set(const std::string& log) {
  std::vector<double> watts;
  std::istringstream lines(log);
  const std::string setter = "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=";
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(setter, 0) == 0) watts.push_back(std::stod(line.substr(setter.size())) / 1000.0);
  return watts;
}

TEST_F(FakeNvmlTuneTest, L11_APowerLimitFoundBelowTheMaximumIsTheCeiling) {
  // An administrator capped the H200 (200-700 W) at 450 W.
  const nlohmann::json controls{
      {"locked_sm_min_mhz", nullptr},  {"locked_sm_max_mhz", nullptr},     {"locked_mem_min_mhz", nullptr},
      {"locked_mem_max_mhz", nullptr}, {"application_graphics_mhz", 1980}, {"application_memory_mhz", 3201},
      {"power_limit_w", 450.0}};
  const auto preset = [&] {
    std::filesystem::remove(log_path());
    std::ofstream(dir_ / "gpu-state.json")
        << nlohmann::json{{"devices", {{{"index", 0}, {"controls", controls}}}}};
  };
  preset();
  const auto capped = tune({{"ITERS", "60"}}, {"--knobs", "pl"});
  ASSERT_EQ(capped.exit_code, 0) << capped.err;
  const std::vector<double> watts = power_limits_set(log());
  ASSERT_GE(watts.size(), 3u) << log();
  for (double w : watts) EXPECT_LE(w, 450.0) << log();
  EXPECT_LT(*std::min_element(watts.begin(), watts.end()), 400.0) << "probed below the cap: " << log();
  EXPECT_EQ(watts.back(), 450.0) << "restored to the limit found";

  preset();
  const auto allowed = tune({{"ITERS", "60"}}, {"--knobs", "pl", "--allow-above-found-power-limit"});
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  const std::vector<double> above = power_limits_set(log());
  EXPECT_GT(*std::max_element(above.begin(), above.end()), 450.0) << "allowed above the cap: " << log();
  EXPECT_EQ(above.back(), 450.0) << "restored to the limit found";
}

TEST(TuneCli, BadInputGetsOneLineAndItsExitCode) {
  testing::ScratchDir scratch;
  const std::string db = (scratch.path() / "db.sqlite").string();
  const std::vector<std::pair<std::vector<std::string>, int>> cases = {
      {{"tune", "--device", "sim:v100", "--db", db}, 2},                                         // no job
      {{"tune", "--device", "sim:v100", "--db", db, "--sim-job", "resnet50", "--", "true"}, 2},  // two jobs
      {{"tune", "--device", "sim:v100", "--db", db, "--knobs", "sm,gpu", "--sim-job", "resnet50"}, 3},
      {{"tune", "--device", "sim:v100", "--db", db, "--knobs", "sm,sm", "--sim-job", "resnet50"}, 3},
      {{"tune", "--device", "sim:v100", "--db", db, "--probe-iters", "0", "--sim-job", "resnet50"}, 3},
      {{"tune", "--device", "sim:v100", "--db", db, "--strategy", "nope", "--sim-job", "resnet50"}, 3},
      {{"tune", "--device", "sim:v100", "--db", db, "--sim-job", "resnet50:0"}, 3},
      {{"tune", "--device", "sim:v100", "--db", db, "--sim-job", "resnet50/b0:10"}, 3},
      {{"tune", "--device", "sim:v100", "--db", db, "--sim-job", "nosuchnet:10"}, 3},
      {{"tune", "--device", "sim:v100", "--db", db, "--max-slowdown", "5", "--objective", "edp", "--sim-job",
        "resnet50"},
       2},
      {{"tune", "--device", "sim:v100", "--db", db, "--objective", "fastest", "--sim-job", "resnet50"}, 3},
  };
  for (const auto& [arguments, code] : cases) {
    const auto result = testing::run_dvfslab(arguments);
    EXPECT_EQ(result.exit_code, code) << ::testing::PrintToString(arguments) << ": " << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_NE(result.err.find("error:"), std::string::npos) << result.err;
  }
}

TEST(TuneCli, AJobWithoutMarkersIsWarnedAboutAndKeepsItsExitCode) {
  testing::ScratchDir scratch;
  const auto result =
      testing::run_dvfslab({"tune", "--device", "sim:v100", "--db", (scratch.path() / "db.sqlite").string(),
                            "--", "bash", "-c", "exit 3"});
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("warning: the program reported no iterations"), std::string::npos) << result.err;
}

TEST(TuneCli, ASimulatedJobReportsEstimatesAndIsStored) {
  testing::ScratchDir scratch;
  const std::string db = (scratch.path() / "db.sqlite").string();
  const auto result = testing::run_dvfslab(
      {"tune", "--device", "sim:v100", "--db", db, "--json", "--sim-job", "resnet50/train/b64:1500"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("\"estimated_default_energy_j\""), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("\"label\": \"sm="), std::string::npos) << result.out;
  const auto exported = testing::run_dvfslab({"export", db, "--format", "csv"});
  EXPECT_NE(exported.out.find("tune:sim-job resnet50/train/b64:1500"), std::string::npos)
      << exported.err << exported.out.substr(0, 500);
}

// Prefill (compute-bound) then decode (memory-bound) of the simulated Llama decoder:
// the tuner sees the change of phase and holds a lower SM clock for decode.
TEST(TuneCli, ASimulatedLlamaJobHoldsALowerClockInDecodeThanInPrefill) {
  testing::ScratchDir scratch;
  const auto result = testing::run_dvfslab(
      {"tune", "--device", "sim:h200", "--db", (scratch.path() / "db.sqlite").string(), "--json", "--sim-job",
       "llama_prefill/infer/b16/bf16:3000,llama_decode/infer/b16/bf16:20000"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json document = nlohmann::json::parse(result.out);
  const nlohmann::json& held = document.at("held");
  ASSERT_GE(held.size(), 2u) << result.out;
  const nlohmann::json& prefill = held.front();
  const nlohmann::json& decode = held.back();
  EXPECT_LT(prefill.at("first_iteration").get<std::int64_t>(), 3000);
  EXPECT_GE(decode.at("first_iteration").get<std::int64_t>(), 3000);
  EXPECT_LT(decode.at("setting").at("sm_mhz").get<int>() + 150, prefill.at("setting").at("sm_mhz").get<int>())
      << result.out;
}

}  // namespace
}  // namespace dvfslab
