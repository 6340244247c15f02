// The program of `dvfslab search ... -- CMD` and of a sweep's command workload ends
// with dvfslab (finding H3): SIGINT, SIGTERM and SIGHUP to dvfslab stop the program
// and what it started (its process group), the run is recorded as interrupted and
// the fake NVML GPU is back in the state it was found in; after `kill -9` of
// dvfslab the kernel kills the program (PR_SET_PDEATHSIG).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "dvfslab/store.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

using testing::EnvironmentChanges;

// Writes its pid and that of a background `sleep` it starts, then reports one
// iteration of 8 items every 20 ms; at its third iteration after the fake GPU's
// power limit left the 450 W it was found at, it sends SIGNAL_NAME to its parent
// (dvfslab). Like a Python program, it ignores SIGPIPE, so that a marker pipe whose
// reader died does not end it; its output goes to /dev/null, so that it holds no
// pipe of the test's. With IGNORE_SIGNALS=1 it ignores SIGINT, SIGTERM and SIGHUP.
// No single quotes: a plan holds it as a TOML literal string.
const char* const workload_program =
    "exec > /dev/null 2>&1; trap \"\" PIPE; if [ \"$IGNORE_SIGNALS\" = 1 ]; then trap \"\" INT TERM HUP; fi; "
    "echo $$ > \"$PROGRAM_PID_FILE\"; "
    "sleep 300 > /dev/null 2>&1 & echo $! > \"$BACKGROUND_PID_FILE\"; changed=0; while :; do sleep 0.02; "
    "echo \"dvfslab:iter 1 items 8\" >&$DVFSLAB_MARK_FD; "
    "grep -q \"power_limit_w.: 450.0\" \"$DVFSLAB_FAKE_NVML_STATE\" || changed=$((changed+1)); "
    "if [ \"$changed\" = 3 ]; then kill -$SIGNAL_NAME $PPID; fi; done";

// Running, and not a zombie waiting for its parent to read its status.
bool process_alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto name_end = text.rfind(')');
  return name_end == std::string::npos || text.substr(name_end + 2, 1) != "Z";
}

// Whether `pid` is gone within `limit` (the kernel delivers a parent-death signal
// asynchronously; dvfslab itself waits for the program before it exits).
bool gone_within(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (process_alive(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

class WorkloadStopTest : public ::testing::Test {
 protected:
  // The GPU is found as an administrator left it (450 W, application clock 1500
  // MHz), so that "restored" means this state, not the fake's defaults.
  void SetUp() override {
    std::filesystem::create_directories(dir_ / "state");
    const nlohmann::json controls{
        {"locked_sm_min_mhz", nullptr},  {"locked_sm_max_mhz", nullptr},     {"locked_mem_min_mhz", nullptr},
        {"locked_mem_max_mhz", nullptr}, {"application_graphics_mhz", 1500}, {"application_memory_mhz", 3201},
        {"power_limit_w", 450.0}};
    std::ofstream(dir_ / "gpu-state.json")
        << nlohmann::json{{"devices", {{{"index", 0}, {"controls", controls}}}}};
    const auto info = testing::run_dvfslab({"info", "--device", "0"}, environment());
    ASSERT_EQ(info.exit_code, 0) << info.err;
    found_ = controls_now();
    ASSERT_EQ(found_.at("power_limit_w"), 450.0) << found_;
  }

  // A program the old code left behind would run forever.
  void TearDown() override {
    for (const char* file : {"program.pid", "background.pid"}) {
      if (const pid_t pid = pid_in(file); pid > 0 && process_alive(pid)) ::kill(pid, SIGKILL);
    }
  }

  EnvironmentChanges environment(EnvironmentChanges extra = {}) const {
    extra["DVFSLAB_FAKE_NVML_LOG"] = (dir_ / "setters.log").string();
    extra["DVFSLAB_FAKE_NVML_STATE"] = (dir_ / "gpu-state.json").string();
    extra["DVFSLAB_STATE_DIR"] = (dir_ / "state").string();
    extra["PROGRAM_PID_FILE"] = (dir_ / "program.pid").string();
    extra["BACKGROUND_PID_FILE"] = (dir_ / "background.pid").string();
    return testing::fake_nvml_environment("h200", std::move(extra));
  }

  // The default and three power limits, 0.3 s windows.
  testing::ProcessResult search(EnvironmentChanges env) {
    return run({"search", "--device",          "0",  "--workload",
                "loop",   "--knobs",           "pl", "--strategy",
                "grid",   "--budget",          "4",  "--duration",
                "0.3",    "--settle",          "0",  "--repetitions",
                "1",      "--max-repetitions", "1",  "--allow-clock-changes",
                "--db",   database(),          "--", "bash",
                "-c",     workload_program},
               std::move(env));
  }

  testing::ProcessResult sweep(EnvironmentChanges env) {
    const std::filesystem::path plan = dir_ / "plan.toml";
    std::ofstream(plan)
        << "[knobs]\nsm_mhz = [1005, 1500]\npower_limit_w = [500]\n[[cases]]\nname = \"loop\"\n"
           "command = [\"bash\", \"-c\", '"
        << workload_program
        << "']\n[measure]\nwarmup_iterations = 1\nduration_s = 0.3\nsettle_s = 0\n"
           "drift_check = false\norder = \"ascending\"\ninclude_default = false\n";
    return run({"sweep", plan.string(), "--device", "0", "--allow-clock-changes", "--db", database()},
               std::move(env));
  }

  testing::ProcessResult run(const std::vector<std::string>& arguments, EnvironmentChanges env) {
    return testing::run_process_with_limit(DVFSLAB_BINARY, arguments, environment(std::move(env)),
                                           std::chrono::seconds(60));
  }

  // dvfslab ended by `signal_name` with `exit_code`, after changing the GPU: its
  // program and the program's background process are gone, the run is recorded as
  // interrupted and the GPU is as found.
  void expect_stopped_and_recorded(const testing::ProcessResult& result, const std::string& signal_name,
                                   int exit_code) {
    EXPECT_EQ(result.exit_code, exit_code) << signal_name << ": " << result.err;
    EXPECT_NE(read(dir_ / "setters.log").find("nvmlDeviceSetPowerManagementLimit"), std::string::npos)
        << "the signal must land after a change";
    const pid_t program = pid_in("program.pid");
    const pid_t background = pid_in("background.pid");
    ASSERT_GT(program, 0);
    ASSERT_GT(background, 0);
    EXPECT_TRUE(gone_within(program, std::chrono::seconds(3))) << "the program outlived dvfslab";
    EXPECT_TRUE(gone_within(background, std::chrono::seconds(3)))
        << "the program's process group outlived it";
    const auto runs = Store::open_existing(database()).runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs.front().status, RunStatus::interrupted) << to_string(runs.front().status);
    EXPECT_EQ(controls_now(), found_);
    EXPECT_FALSE(testing::restore_journal_in(dir_ / "state"));
  }

  std::string database() const { return (dir_ / "db.sqlite").string(); }

  nlohmann::json controls_now() const {
    return nlohmann::json::parse(std::ifstream(dir_ / "gpu-state.json")).at("devices").at(0).at("controls");
  }

  pid_t pid_in(const std::string& file) const {
    std::ifstream in(dir_ / file);
    pid_t pid = 0;
    in >> pid;
    return pid;
  }

  static std::string read(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  testing::ScratchDir scratch_;
  const std::filesystem::path dir_ = scratch_.path();
  nlohmann::json found_;
};

TEST_F(WorkloadStopTest, H3_SearchStopsItsMarkerCommandOnSigint) {
  expect_stopped_and_recorded(search({{"SIGNAL_NAME", "INT"}}), "INT", 130);
}

TEST_F(WorkloadStopTest, H3_SearchStopsItsMarkerCommandOnSigterm) {
  expect_stopped_and_recorded(search({{"SIGNAL_NAME", "TERM"}}), "TERM", 143);
}

TEST_F(WorkloadStopTest, H3_SearchStopsItsMarkerCommandOnSighup) {
  expect_stopped_and_recorded(search({{"SIGNAL_NAME", "HUP"}}), "HUP", 129);
}

TEST_F(WorkloadStopTest, H3_SweepStopsItsCommandWorkloadOnSigint) {
  expect_stopped_and_recorded(sweep({{"SIGNAL_NAME", "INT"}}), "INT", 130);
}

TEST_F(WorkloadStopTest, H3_SweepStopsItsCommandWorkloadOnSigterm) {
  expect_stopped_and_recorded(sweep({{"SIGNAL_NAME", "TERM"}}), "TERM", 143);
}

TEST_F(WorkloadStopTest, H3_SweepStopsItsCommandWorkloadOnSighup) {
  expect_stopped_and_recorded(sweep({{"SIGNAL_NAME", "HUP"}}), "HUP", 129);
}

TEST_F(WorkloadStopTest, H3_AMarkerCommandIgnoringTheSignalIsKilledAfterTheGracePeriod) {
  const auto started = std::chrono::steady_clock::now();
  const auto result = search({{"SIGNAL_NAME", "TERM"}, {"IGNORE_SIGNALS", "1"}});
  expect_stopped_and_recorded(result, "TERM", 143);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20))
      << "the grace period is 2 s";
}

TEST_F(WorkloadStopTest, H3_KillMinus9OfSearchKillsItsMarkerCommand) {
  const auto result = search({{"SIGNAL_NAME", "KILL"}});
  EXPECT_EQ(result.exit_code, 128 + SIGKILL) << result.err;
  const pid_t program = pid_in("program.pid");
  ASSERT_GT(program, 0);
  EXPECT_TRUE(gone_within(program, std::chrono::seconds(3))) << "the program outlived dvfslab";
}

TEST_F(WorkloadStopTest, H3_KillMinus9OfSweepKillsItsCommandWorkload) {
  const auto result = sweep({{"SIGNAL_NAME", "KILL"}});
  EXPECT_EQ(result.exit_code, 128 + SIGKILL) << result.err;
  const pid_t program = pid_in("program.pid");
  ASSERT_GT(program, 0);
  EXPECT_TRUE(gone_within(program, std::chrono::seconds(3))) << "the program outlived dvfslab";
}

}  // namespace
}  // namespace dvfslab
