// The guard through the real dvfslab binary on the fake NVML, whose simulated
// control state persists in a file (DVFSLAB_FAKE_NVML_STATE) so that it outlives
// a killed process: SIGKILL then `dvfslab restore`, SIGINT, SIGTERM, the lock,
// refusals. The fake's setter log shows what reached the "driver".
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "background_process.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

const std::vector<std::string> kHold1200 = {"hold", "--device", "0", "--sm", "1200", "--mem", "2201",
                                            "--power-limit", "400", "--allow-clock-changes"};

class GuardCli : public ::testing::Test {
 protected:
  ScratchDir dir;
  EnvironmentChanges environment = fake_nvml_environment(
      "h200", {{"DVFSLAB_FAKE_NVML_LOG", (dir / "setters.log").string()},
               {"DVFSLAB_FAKE_NVML_STATE", (dir / "gpu-state.json").string()},
               {"DVFSLAB_STATE_DIR", (dir / "state").string()}});

  // The fake GPU's control state as the last process left it.
  nlohmann::json controls() const {
    return nlohmann::json::parse(std::ifstream(dir / "gpu-state.json")).at("devices").at(0).at("controls");
  }

  std::vector<std::string> setter_log() const {
    std::vector<std::string> lines;
    std::ifstream in(dir / "setters.log");
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  bool has_journal() const {
    return std::filesystem::exists(dir / "state") && !std::filesystem::is_empty(dir / "state") &&
           std::any_of(std::filesystem::directory_iterator(dir / "state"), std::filesystem::directory_iterator(),
                       [](const auto& entry) { return entry.path().filename().string().starts_with("journal-"); });
  }

  std::string stderr_of(const std::string& name) const {
    std::ifstream in(dir / name);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // The state a fresh fake GPU has, as written at its first nvmlInit.
  nlohmann::json found_state() {
    const ProcessResult info = run_dvfslab({"info", "--device", "0"}, environment);
    EXPECT_EQ(info.exit_code, 0) << info.err;
    return controls();
  }

  std::unique_ptr<BackgroundProcess> start_hold(const std::string& stderr_name) {
    auto process = std::make_unique<BackgroundProcess>(DVFSLAB_BINARY, kHold1200, environment,
                                                       (dir / stderr_name).string());
    EXPECT_TRUE(process->wait_for_line("holding")) << stderr_of(stderr_name);
    return process;
  }

  void expect_held_setting() {
    const nlohmann::json held = controls();
    EXPECT_EQ(held.at("locked_sm_max_mhz"), 1200);
    EXPECT_EQ(held.at("locked_mem_max_mhz"), 2201);
    EXPECT_EQ(held.at("power_limit_w"), 400.0);
  }
};

TEST_F(GuardCli, RestoreAfterSigkillPutsEveryClockAndThePowerLimitBack) {
  const nlohmann::json found = found_state();
  auto hold = start_hold("hold.err");
  expect_held_setting();
  hold->send(SIGKILL);
  EXPECT_EQ(hold->wait(), 128 + SIGKILL);
  EXPECT_TRUE(has_journal());
  const std::size_t calls_before_restore = setter_log().size();

  const ProcessResult restore = run_dvfslab({"restore"}, environment);
  EXPECT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_NE(restore.out.find("restored the state dvfslab process " + std::to_string(hold->pid())),
            std::string::npos)
      << restore.out;
  EXPECT_EQ(controls(), found);
  EXPECT_FALSE(has_journal());
  const std::vector<std::string> log = setter_log();
  EXPECT_EQ(std::vector<std::string>(log.begin() + static_cast<long>(calls_before_restore), log.end()),
            (std::vector<std::string>{"nvmlDeviceResetGpuLockedClocks device=0",
                                      "nvmlDeviceResetMemoryLockedClocks device=0",
                                      "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=700000"}));

  const ProcessResult again = run_dvfslab({"restore"}, environment);
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.out.find("nothing to restore"), std::string::npos) << again.out;
}

TEST_F(GuardCli, RestoreWithADeviceSaysWhenThereIsNothingToDo) {
  const ProcessResult restore = run_dvfslab({"restore", "--device", "0"}, environment);
  EXPECT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_NE(restore.out.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(restore.out.find("nothing to restore"), std::string::npos) << restore.out;
  EXPECT_TRUE(setter_log().empty());
}

TEST_F(GuardCli, SigintRestoresAndExits130) {
  const nlohmann::json found = found_state();
  auto hold = start_hold("hold.err");
  expect_held_setting();
  hold->send(SIGINT);
  EXPECT_EQ(hold->wait(), 130) << stderr_of("hold.err");
  EXPECT_EQ(controls(), found);
  EXPECT_FALSE(has_journal());
  EXPECT_NE(stderr_of("hold.err").find("interrupted by SIGINT"), std::string::npos);
}

TEST_F(GuardCli, SigtermRestoresAndExits143) {
  const nlohmann::json found = found_state();
  auto hold = start_hold("hold.err");
  hold->send(SIGTERM);
  EXPECT_EQ(hold->wait(), 143) << stderr_of("hold.err");
  EXPECT_EQ(controls(), found);
  EXPECT_FALSE(has_journal());
  const std::vector<std::string> log = setter_log();
  ASSERT_GE(log.size(), 3u);
  EXPECT_EQ(log.back(), "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=700000");
}

TEST_F(GuardCli, ASecondProcessOnTheGpuIsRefusedWithTheHoldersPid) {
  auto hold = start_hold("hold.err");
  const ProcessResult second = run_dvfslab({"hold", "--device", "0", "--seconds", "0"}, environment);
  EXPECT_EQ(second.exit_code, 9);
  EXPECT_NE(second.err.find("in use by dvfslab process " + std::to_string(hold->pid())), std::string::npos)
      << second.err;
  const ProcessResult restore = run_dvfslab({"restore"}, environment);
  EXPECT_EQ(restore.exit_code, 9) << "a live owner's journal is not restored by another process";
  hold->send(SIGTERM);
  EXPECT_EQ(hold->wait(), 143);
}

TEST_F(GuardCli, TheNextRunRestoresWhatAKilledOneLeft) {
  const nlohmann::json found = found_state();
  auto hold = start_hold("hold.err");
  hold->send(SIGKILL);
  hold->wait();
  const ProcessResult next = run_dvfslab({"hold", "--device", "0", "--seconds", "0"}, environment);
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_NE(next.err.find("restored NVIDIA H200 as dvfslab process " + std::to_string(hold->pid())),
            std::string::npos)
      << next.err;
  EXPECT_EQ(controls(), found);
}

TEST_F(GuardCli, HoldForSomeSecondsRestoresAndExits0) {
  const nlohmann::json found = found_state();
  const ProcessResult held = run_dvfslab(
      {"hold", "--device", "0", "--power-limit", "500", "--allow-clock-changes", "--seconds", "0"}, environment);
  EXPECT_EQ(held.exit_code, 0) << held.err;
  EXPECT_NE(held.out.find("power limit 500 W"), std::string::npos) << held.out;
  EXPECT_NE(held.out.find("restored NVIDIA H200 (power limit set back to 700 W)"), std::string::npos) << held.out;
  EXPECT_EQ(controls(), found);
  EXPECT_EQ(setter_log(), (std::vector<std::string>{"nvmlDeviceSetPowerManagementLimit device=0 limit_mw=500000",
                                                    "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=700000"}));
}

TEST_F(GuardCli, BadSettingsAndMissingPermissionChangeNothing) {
  const ProcessResult unsupported =
      run_dvfslab({"hold", "--device", "0", "--sm", "1234", "--allow-clock-changes", "--seconds", "0"}, environment);
  EXPECT_EQ(unsupported.exit_code, 3);
  EXPECT_NE(unsupported.err.find("nearest supported: 1230 MHz or 1245 MHz"), std::string::npos) << unsupported.err;

  const ProcessResult too_high = run_dvfslab(
      {"hold", "--device", "0", "--power-limit", "800", "--allow-clock-changes", "--seconds", "0"}, environment);
  EXPECT_EQ(too_high.exit_code, 3);
  EXPECT_NE(too_high.err.find("200–700 W"), std::string::npos) << too_high.err;

  const ProcessResult not_allowed = run_dvfslab({"hold", "--device", "0", "--sm", "1200", "--seconds", "0"}, environment);
  EXPECT_EQ(not_allowed.exit_code, 5);
  EXPECT_NE(not_allowed.err.find("--allow-clock-changes"), std::string::npos) << not_allowed.err;

  EnvironmentChanges read_only = environment;
  read_only["DVFSLAB_READ_ONLY"] = "1";
  const ProcessResult refused =
      run_dvfslab({"hold", "--device", "0", "--sm", "1200", "--allow-clock-changes", "--seconds", "0"}, read_only);
  EXPECT_EQ(refused.exit_code, 5);
  EXPECT_NE(refused.err.find("DVFSLAB_READ_ONLY=1"), std::string::npos) << refused.err;

  EXPECT_TRUE(setter_log().empty());
  EXPECT_FALSE(has_journal());
}

}  // namespace
}  // namespace dvfslab::testing
