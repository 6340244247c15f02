// The guard over several GPUs of one job, through the real dvfslab binary on a
// fake NVML with four H200s whose control state outlives each process: `hold` on
// every GPU then SIGTERM or SIGKILL and `dvfslab restore`, jobs asking for
// overlapping GPUs, and one GPU refusing while the others accept.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "background_process.hpp"
#include "fake_node.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

std::vector<std::string> hold_arguments(const std::string& device) {
  return {"hold",  "--device", device,          "--sm", "1200",
          "--mem", "2201",     "--power-limit", "400",  "--allow-clock-changes"};
}

// What restoring one GPU that `hold_arguments` changed sends to the driver (the
// setter log's lines without their device).
const std::vector<std::string> restore_calls = {"nvmlDeviceResetGpuLockedClocks",
                                                "nvmlDeviceResetMemoryLockedClocks",
                                                "nvmlDeviceSetPowerManagementLimit limit_mw=450000"};

class MultiGpuGuardCli : public FakeNodeTest {
 protected:
  std::string stderr_of(const std::string& name) const {
    std::ifstream in(dir / name);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  std::unique_ptr<BackgroundProcess> start_hold(const std::string& device, const std::string& last_line,
                                                const std::string& stderr_name) {
    auto process = std::make_unique<BackgroundProcess>(DVFSLAB_BINARY, hold_arguments(device), environment,
                                                       (dir / stderr_name).string());
    EXPECT_TRUE(process->wait_for_line(last_line)) << stderr_of(stderr_name);
    return process;
  }

  void expect_held(int device) {
    const nlohmann::json held = controls().at(static_cast<std::size_t>(device));
    EXPECT_EQ(held.at("locked_sm_max_mhz"), 1200) << "GPU " << device;
    EXPECT_EQ(held.at("locked_mem_max_mhz"), 2201) << "GPU " << device;
    EXPECT_EQ(held.at("power_limit_w"), 400.0) << "GPU " << device;
  }
};

TEST_F(MultiGpuGuardCli, HoldOnEveryGpuThenSigtermRestoresAllFour) {
  const nlohmann::json found = found_state();
  auto hold = start_hold("all", "on GPU 3 (NVIDIA H200)", "hold.err");
  for (int device = 0; device < kGpus; ++device) expect_held(device);
  EXPECT_EQ(journal_count(), 4u) << "one journal per GPU";
  const std::size_t calls_before = setter_log().size();

  hold->send(SIGTERM);
  EXPECT_EQ(hold->wait(), 143) << stderr_of("hold.err");
  EXPECT_EQ(controls(), found);
  EXPECT_EQ(journal_count(), 0u);
  for (int device = 0; device < kGpus; ++device)
    EXPECT_EQ(calls_on(device, calls_before), restore_calls) << "GPU " << device;
}

TEST_F(MultiGpuGuardCli, SigkillLeavesFourJournalsAndRestorePutsEveryGpuBack) {
  const nlohmann::json found = found_state();
  auto hold = start_hold("all", "on GPU 3 (NVIDIA H200)", "hold.err");
  hold->send(SIGKILL);
  EXPECT_EQ(hold->wait(), 128 + SIGKILL);
  EXPECT_EQ(journal_count(), 4u);
  const std::size_t calls_before = setter_log().size();

  const ProcessResult restore = run_dvfslab({"restore"}, environment);
  EXPECT_EQ(restore.exit_code, 0) << restore.err;
  const std::string restored = "restored the state dvfslab process " + std::to_string(hold->pid());
  std::size_t lines = 0;
  for (std::size_t at = restore.out.find(restored); at != std::string::npos;
       at = restore.out.find(restored, at + 1))
    ++lines;
  EXPECT_EQ(lines, 4u) << restore.out;
  EXPECT_EQ(controls(), found);
  EXPECT_EQ(journal_count(), 0u);
  for (int device = 0; device < kGpus; ++device)
    EXPECT_EQ(calls_on(device, calls_before), restore_calls) << "GPU " << device;
}

TEST_F(MultiGpuGuardCli, AJobAskingForAHeldGpuIsRefusedAndLeavesItsOtherGpusFree) {
  const nlohmann::json found = found_state();
  auto first = start_hold("2", "holding", "first.err");
  const std::size_t calls_before = setter_log().size();

  // GPUs 0 and 1 come before GPU 2 in UUID order: the refused job had taken them.
  const ProcessResult second = run_dvfslab(hold_arguments("all"), environment);
  EXPECT_EQ(second.exit_code, 9) << second.err;
  EXPECT_NE(second.err.find("in use by dvfslab process " + std::to_string(first->pid())), std::string::npos)
      << second.err;
  EXPECT_EQ(setter_log().size(), calls_before) << "the refused job made no control call";
  EXPECT_EQ(journal_count(), 1u);

  for (const std::string device : {"0", "1", "3"}) {
    std::vector<std::string> arguments = hold_arguments(device);
    arguments.insert(arguments.end(), {"--seconds", "0"});
    const ProcessResult third = run_dvfslab(arguments, environment);
    EXPECT_EQ(third.exit_code, 0) << "GPU " << device << ": " << third.err;
  }
  expect_held(2);
  first->send(SIGTERM);
  EXPECT_EQ(first->wait(), 143);
  EXPECT_EQ(controls(), found);
}

TEST_F(MultiGpuGuardCli, OneGpuRefusingLeavesTheOthersRestoredAndNoJournal) {
  const nlohmann::json found = found_state();
  environment["DVFSLAB_FAKE_NVML_NO_PERMISSION_DEVICES"] = "2";
  std::vector<std::string> arguments = hold_arguments("all");
  arguments.insert(arguments.end(), {"--seconds", "0"});
  const ProcessResult held = run_dvfslab(arguments, environment);
  EXPECT_EQ(held.exit_code, 5) << held.err;
  EXPECT_NE(held.err.find("NVML_ERROR_NO_PERMISSION"), std::string::npos) << held.err;
  EXPECT_EQ(controls(), found);
  EXPECT_EQ(journal_count(), 0u);
  for (int device : {0, 1}) {
    const std::vector<std::string> calls = calls_on(device);
    ASSERT_EQ(calls.size(), 6u) << "GPU " << device;
    EXPECT_EQ(std::vector<std::string>(calls.begin() + 3, calls.end()), restore_calls)
        << "GPU " << device;
  }
  EXPECT_EQ(calls_on(2).size(), 1u) << "the refused first call, nothing to undo";
  EXPECT_TRUE(calls_on(3).empty()) << "the GPU after the refusal is never touched";
}

TEST_F(MultiGpuGuardCli, RestoreGoesOnPastAGpuThatRefusesAndKeepsOnlyItsJournal) {
  const nlohmann::json found = found_state();
  auto hold = start_hold("all", "on GPU 3 (NVIDIA H200)", "hold.err");
  hold->send(SIGKILL);
  hold->wait();

  EnvironmentChanges refusing = environment;
  refusing["DVFSLAB_FAKE_NVML_NO_PERMISSION_DEVICES"] = "2";
  const ProcessResult restore = run_dvfslab({"restore", "--device", "all"}, refusing);
  EXPECT_EQ(restore.exit_code, 5) << restore.err;
  const nlohmann::json after = controls();
  for (std::size_t device : {0u, 1u, 3u}) EXPECT_EQ(after.at(device), found.at(device)) << "GPU " << device;
  expect_held(2);
  EXPECT_EQ(journal_count(), 1u);

  const ProcessResult again = run_dvfslab({"restore"}, environment);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(controls(), found);
  EXPECT_EQ(journal_count(), 0u);
}

TEST_F(MultiGpuGuardCli, HoldOnAutoKeepsTakingOnlyTheFirstGpu) {
  const ProcessResult held =
      run_dvfslab({"hold", "--power-limit", "500", "--allow-clock-changes", "--seconds", "0"}, environment);
  EXPECT_EQ(held.exit_code, 0) << held.err;
  EXPECT_NE(held.out.find("restored NVIDIA H200 (power limit set back to 450 W)"), std::string::npos)
      << held.out;
  EXPECT_EQ(setter_log(),
            (std::vector<std::string>{"nvmlDeviceSetPowerManagementLimit device=0 limit_mw=500000",
                                      "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=450000"}));
}

}  // namespace
}  // namespace dvfslab::testing
