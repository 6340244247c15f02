// dvfslab sweep on the fake NVML: the GPU is left as found after SIGINT and SIGTERM,
// a journal left by SIGKILL is restored at the next start, one sweep per GPU, and
// no control call without permission. The fake's setter log is the evidence.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

using testing::EnvironmentChanges;

// A program that reports one iteration of 8 items every 20 ms; with SIGNAL_AT=N it
// sends SIGNAL_NAME to its parent (dvfslab) at its N-th iteration, i.e. while a
// point with changed clocks is being measured.
const char* const marker_loop =
    "n=0; while :; do sleep 0.02; n=$((n+1)); echo \"dvfslab:iter 1 items 8\" >&$DVFSLAB_MARK_FD; "
    "if [ \"$n\" = \"${SIGNAL_AT:-0}\" ]; then kill -$SIGNAL_NAME $PPID; fi; done";

std::string plan_with_knobs(const std::string& knobs) {
  return knobs + "\n[[cases]]\nname = \"loop\"\ncommand = [\"bash\", \"-c\", '" + marker_loop +
         "']\n[measure]\nwarmup_iterations = 1\nduration_s = 0.3\nsettle_s = 0\ndrift_check = false\n"
         "order = \"ascending\"\ninclude_default = " +
         (knobs.empty() ? "true" : "false") + "\n";
}

// The control state a sequence of setter calls leaves, from the fake's log.
struct ReplayedState {
  bool sm_locked = false;
  bool memory_locked = false;
  bool application_clocks_set = false;
  std::optional<long> power_limit_mw;
  std::size_t calls = 0;
};

ReplayedState replay(const std::string& log) {
  ReplayedState state;
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    ++state.calls;
    if (line.starts_with("nvmlDeviceSetGpuLockedClocks")) state.sm_locked = true;
    if (line.starts_with("nvmlDeviceResetGpuLockedClocks")) state.sm_locked = false;
    if (line.starts_with("nvmlDeviceSetMemoryLockedClocks")) state.memory_locked = true;
    if (line.starts_with("nvmlDeviceResetMemoryLockedClocks")) state.memory_locked = false;
    if (line.starts_with("nvmlDeviceSetApplicationsClocks")) state.application_clocks_set = true;
    if (line.starts_with("nvmlDeviceResetApplicationsClocks")) state.application_clocks_set = false;
    if (const auto at = line.find("limit_mw="); line.starts_with("nvmlDeviceSetPowerManagementLimit")) {
      state.power_limit_mw = std::stol(line.substr(at + 9));
    }
  }
  return state;
}

class FakeNvmlSweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_ / "state");
    changing_plan_ =
        write("changing.toml", plan_with_knobs("[knobs]\nsm_mhz = [1005, 1500]\npower_limit_w = [500]\n"));
    default_plan_ = write("default.toml", plan_with_knobs(""));
  }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  EnvironmentChanges environment(EnvironmentChanges extra = {}) const {
    extra["DVFSLAB_FAKE_NVML_LOG"] = log_path();
    extra["DVFSLAB_STATE_DIR"] = (dir_ / "state").string();
    extra.try_emplace("DVFSLAB_TEST_KILL_AFTER_POINTS", std::nullopt);
    return testing::fake_nvml_environment("h200", std::move(extra));
  }

  testing::ProcessResult sweep(const std::string& plan, std::vector<std::string> extra,
                               EnvironmentChanges env = {}) {
    std::vector<std::string> arguments = {"sweep", plan,   "--device",
                                          "0",     "--db", (dir_ / "db.sqlite").string()};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return testing::run_dvfslab(arguments, environment(std::move(env)));
  }

  std::string log_path() const { return (dir_ / "setters.log").string(); }
  std::string log() const { return testing::read_setter_log(log_path()); }
  bool journal_exists() const { return testing::restore_journal_in(dir_ / "state"); }

  testing::ScratchDir scratch_;
  const std::filesystem::path dir_ = scratch_.path();
  std::string changing_plan_;
  std::string default_plan_;
};

// The H200's default power limit, which the fake starts with.
constexpr long h200_default_limit_mw = 700000;

TEST_F(FakeNvmlSweepTest, AWholeSweepLeavesTheGpuAsFound) {
  const auto result = sweep(changing_plan_, {"--allow-clock-changes"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto state = replay(log());
  EXPECT_GT(state.calls, 2u);
  EXPECT_FALSE(state.sm_locked);
  EXPECT_FALSE(state.memory_locked);
  EXPECT_EQ(state.power_limit_mw, h200_default_limit_mw);
  EXPECT_FALSE(journal_exists());
}

TEST_F(FakeNvmlSweepTest, SigintAndSigtermRestoreEveryClockAndPowerLimit) {
  for (const auto& [signal_name, exit_code] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    std::filesystem::remove(log_path());
    const auto result =
        sweep(changing_plan_, {"--allow-clock-changes"}, {{"SIGNAL_AT", "8"}, {"SIGNAL_NAME", signal_name}});
    EXPECT_EQ(result.exit_code, exit_code) << signal_name << ": " << result.err;
    const std::string calls = log();
    EXPECT_NE(calls.find("nvmlDeviceSetGpuLockedClocks device=0 min_mhz=1005 max_mhz=1005"),
              std::string::npos)
        << "the signal must land after a change: " << calls;
    EXPECT_NE(calls.find("limit_mw=500000"), std::string::npos) << calls;
    const auto state = replay(calls);
    EXPECT_FALSE(state.sm_locked) << signal_name << ": " << calls;
    EXPECT_FALSE(state.memory_locked) << signal_name;
    EXPECT_EQ(state.power_limit_mw, h200_default_limit_mw) << signal_name << ": " << calls;
    EXPECT_FALSE(journal_exists()) << signal_name;
  }
}

TEST_F(FakeNvmlSweepTest, AfterSigkillTheNextStartRestoresFromTheJournal) {
  const auto killed =
      sweep(changing_plan_, {"--allow-clock-changes"}, {{"DVFSLAB_TEST_KILL_AFTER_POINTS", "1"}});
  ASSERT_EQ(killed.exit_code, 128 + 9) << killed.err;
  const auto left = replay(log());
  EXPECT_TRUE(left.sm_locked) << "killed with the clock locked";
  EXPECT_TRUE(journal_exists());

  std::filesystem::remove(log_path());
  const auto resumed = sweep(changing_plan_, {"--allow-clock-changes", "--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const std::string calls = log();
  // The restore comes first, before the resumed sweep changes anything.
  const std::string first_call = calls.substr(0, calls.find('\n'));
  EXPECT_TRUE(first_call.starts_with("nvmlDeviceReset") ||
              first_call == "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=700000")
      << calls;
  EXPECT_NE(resumed.err.find("already measured"), std::string::npos) << resumed.err;
  EXPECT_FALSE(journal_exists());
  const auto state = replay(calls);
  EXPECT_FALSE(state.sm_locked);
  EXPECT_EQ(state.power_limit_mw, h200_default_limit_mw);
}

TEST_F(FakeNvmlSweepTest, ASecondProcessOnTheSameGpuIsRefusedWithTheHoldersPid) {
  testing::ScopedEnvironment fake(environment());
  const auto gpu = open_gpu("0", testing::open_options_from_environment());
  GpuLock held(gpu->identity());
  const auto result = sweep(changing_plan_, {"--allow-clock-changes"});
  EXPECT_EQ(result.exit_code, 9) << result.err;
  EXPECT_NE(result.err.find(std::to_string(::getpid())), std::string::npos) << result.err;
  EXPECT_TRUE(log().empty()) << "nothing may change while another process holds the GPU";
}

TEST_F(FakeNvmlSweepTest, ADriverRefusingEveryChangeGivesOneLineThatSaysWhatToDoAndNoJournal) {
  const auto refused =
      sweep(changing_plan_, {"--allow-clock-changes"}, {{"DVFSLAB_FAKE_NVML_NO_PERMISSION", "1"}});
  EXPECT_EQ(refused.exit_code, 5) << refused.err;
  std::size_t error_lines = 0;
  for (std::size_t at = refused.err.find("error:"); at != std::string::npos;
       at = refused.err.find("error:", at + 1)) {
    ++error_lines;
  }
  EXPECT_EQ(error_lines, 1u) << "one error line (after the sweep's header): " << refused.err;
  EXPECT_EQ(refused.err.find("could not restore"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("needs root"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("nothing on NVIDIA H200 was changed"), std::string::npos) << refused.err;
  EXPECT_FALSE(journal_exists()) << "nothing was changed, so nothing is left to restore";
  const auto state = replay(log());
  EXPECT_EQ(state.calls, 1u) << "one refused call, and no restore of what never changed: " << log();
}

TEST_F(FakeNvmlSweepTest, ClockChangesNeedPermissionButTheDefaultAlwaysRuns) {
  const auto without_flag = sweep(changing_plan_, {});
  EXPECT_EQ(without_flag.exit_code, 5) << without_flag.err;
  EXPECT_NE(without_flag.err.find("--allow-clock-changes"), std::string::npos) << without_flag.err;
  const auto read_only = sweep(changing_plan_, {"--allow-clock-changes"}, {{"DVFSLAB_READ_ONLY", "1"}});
  EXPECT_EQ(read_only.exit_code, 5) << read_only.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "db.sqlite")) << "refused before anything runs";
  const auto default_only = sweep(default_plan_, {}, {{"DVFSLAB_READ_ONLY", "1"}});
  EXPECT_EQ(default_only.exit_code, 0) << default_only.err;
  EXPECT_TRUE(log().empty()) << "no setter call reached the driver: " << log();
}

}  // namespace
}  // namespace dvfslab
