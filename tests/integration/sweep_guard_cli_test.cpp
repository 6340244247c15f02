// dvfslab sweep on each fake vendor library (fake_backend.hpp): the GPU is left as
// found after SIGINT and SIGTERM, a journal left by SIGKILL is restored at the
// next start, one sweep per GPU, and no control call without permission. The
// fake's state file (what the GPU holds) and setter log are the evidence.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"
#include "fake_backend.hpp"
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

class SweepGuardCli : public ::testing::TestWithParam<testing::FakeBackend> {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_ / "state");
    changing_plan_ =
        write("changing.toml", plan_with_knobs("[knobs]\nsm_mhz = [" + backend_.sweep_sm_mhz.front() + ", " +
                                               backend_.sweep_sm_mhz.back() + "]\npower_limit_w = [500]\n"));
    default_plan_ = write("default.toml", plan_with_knobs(""));
  }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  EnvironmentChanges environment(EnvironmentChanges extra = {}) const {
    extra[backend_.log_variable] = log_path();
    extra[backend_.state_variable] = (dir_ / "gpu-state.json").string();
    extra["DVFSLAB_STATE_DIR"] = (dir_ / "state").string();
    extra.try_emplace("DVFSLAB_TEST_KILL_AFTER_POINTS", std::nullopt);
    return backend_.environment(std::move(extra));
  }

  testing::ProcessResult sweep(const std::string& plan, std::vector<std::string> extra,
                               EnvironmentChanges env = {}) {
    std::vector<std::string> arguments = {"sweep",         plan,   "--device",
                                          backend_.device, "--db", (dir_ / "db.sqlite").string()};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return testing::run_dvfslab(arguments, environment(std::move(env)));
  }

  // What the fake GPU holds now, as the last process left it.
  nlohmann::json controls() const {
    return nlohmann::json::parse(std::ifstream(dir_ / "gpu-state.json")).at("devices").at(0).at("controls");
  }

  // The GPU as a fresh fake finds it, before any sweep.
  nlohmann::json found_state() {
    const testing::ProcessResult info =
        testing::run_dvfslab({"info", "--device", backend_.device}, environment());
    EXPECT_EQ(info.exit_code, 0) << info.err;
    return controls();
  }

  std::string log_path() const { return (dir_ / "setters.log").string(); }
  std::string log() const { return testing::read_setter_log(log_path()); }
  std::size_t calls() const {
    const std::string text = log();
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  }
  bool journal_exists() const { return testing::restore_journal_in(dir_ / "state"); }

  const testing::FakeBackend& backend_ = GetParam();
  testing::ScratchDir scratch_;
  const std::filesystem::path dir_ = scratch_.path();
  std::string changing_plan_;
  std::string default_plan_;
};

INSTANTIATE_TEST_SUITE_P(Backends, SweepGuardCli, ::testing::ValuesIn(testing::fake_backends()),
                         testing::backend_test_name);

TEST_P(SweepGuardCli, AWholeSweepLeavesTheGpuAsFound) {
  const nlohmann::json found = found_state();
  const auto result = sweep(changing_plan_, {"--allow-clock-changes"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_GT(calls(), 2u);
  EXPECT_NE(log().find(backend_.sm_lock_call), std::string::npos) << log();
  EXPECT_EQ(controls(), found) << log();
  EXPECT_FALSE(journal_exists());
}

TEST_P(SweepGuardCli, SigintAndSigtermRestoreEveryClockAndPowerLimit) {
  const nlohmann::json found = found_state();
  for (const auto& [signal_name, exit_code] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    std::filesystem::remove(log_path());
    const auto result =
        sweep(changing_plan_, {"--allow-clock-changes"}, {{"SIGNAL_AT", "8"}, {"SIGNAL_NAME", signal_name}});
    EXPECT_EQ(result.exit_code, exit_code) << signal_name << ": " << result.err;
    const std::string calls = log();
    EXPECT_NE(calls.find(backend_.sm_lock_call), std::string::npos)
        << "the signal must land after a change: " << calls;
    EXPECT_NE(calls.find(backend_.power_call(500)), std::string::npos) << calls;
    EXPECT_EQ(controls(), found) << signal_name << ": " << calls;
    EXPECT_FALSE(journal_exists()) << signal_name;
  }
}

TEST_P(SweepGuardCli, AfterSigkillTheNextStartRestoresFromTheJournal) {
  const nlohmann::json found = found_state();
  const auto killed =
      sweep(changing_plan_, {"--allow-clock-changes"}, {{"DVFSLAB_TEST_KILL_AFTER_POINTS", "1"}});
  ASSERT_EQ(killed.exit_code, 128 + 9) << killed.err;
  EXPECT_NE(controls(), found) << "killed with the clock changed";
  EXPECT_TRUE(journal_exists());

  std::filesystem::remove(log_path());
  const auto resumed = sweep(changing_plan_, {"--allow-clock-changes", "--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const std::string calls = log();
  // The restore comes first, before the resumed sweep changes anything.
  EXPECT_EQ(calls.substr(0, calls.find('\n')), backend_.restore_calls.front()) << calls;
  EXPECT_NE(resumed.err.find("already measured"), std::string::npos) << resumed.err;
  EXPECT_FALSE(journal_exists());
  EXPECT_EQ(controls(), found) << calls;
}

TEST_P(SweepGuardCli, ASecondProcessOnTheSameGpuIsRefusedWithTheHoldersPid) {
  testing::ScopedEnvironment fake(environment());
  const auto gpu = open_gpu(backend_.device, testing::open_options_from_environment());
  GpuLock held(gpu->identity());
  const auto result = sweep(changing_plan_, {"--allow-clock-changes"});
  EXPECT_EQ(result.exit_code, 9) << result.err;
  EXPECT_NE(result.err.find(std::to_string(::getpid())), std::string::npos) << result.err;
  EXPECT_TRUE(log().empty()) << "nothing may change while another process holds the GPU";
}

TEST_P(SweepGuardCli, ADriverRefusingEveryChangeGivesOneLineThatSaysWhatToDoAndNoJournal) {
  const auto refused =
      sweep(changing_plan_, {"--allow-clock-changes"}, {{backend_.no_permission_variable, "1"}});
  EXPECT_EQ(refused.exit_code, 5) << refused.err;
  std::size_t error_lines = 0;
  for (std::size_t at = refused.err.find("error:"); at != std::string::npos;
       at = refused.err.find("error:", at + 1)) {
    ++error_lines;
  }
  EXPECT_EQ(error_lines, 1u) << "one error line (after the sweep's header): " << refused.err;
  EXPECT_EQ(refused.err.find("could not restore"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("needs root"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("nothing on " + backend_.gpu_name + " was changed"), std::string::npos)
      << refused.err;
  EXPECT_FALSE(journal_exists()) << "nothing was changed, so nothing is left to restore";
  EXPECT_EQ(calls(), 1u) << "one refused call, and no restore of what never changed: " << log();
}

TEST_P(SweepGuardCli, ClockChangesNeedPermissionButTheDefaultAlwaysRuns) {
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
