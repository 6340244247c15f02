// The dvfslab command as a user who is not root: its control calls go through the
// daemon (the backend seam's control route, not special cases in commands), the
// client itself calls no NVML setter, DVFSLAB_READ_ONLY=1 still forbids every
// change, `dvfslab info` says where control goes and what the policy allows, and
// `hold` and `tune -- CMD` run end to end and leave the GPU as found.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "daemon/daemon_test_support.hpp"

namespace dvfslab::testing {
namespace {

using namespace std::chrono_literals;

class DaemonClientTest : public DaemonTest {
 protected:
  void SetUp() override {
    DaemonTest::SetUp();
    if (IsSkipped()) return;
    std::filesystem::create_directories(client_dir());
    ASSERT_EQ(::chown(client_dir().c_str(), user.uid, user.gid), 0);
    // GPU 0 within bounds, GPU 1 within its own limits (the tuner probes the whole range).
    daemon = start_daemon(policy_for("gpus = [0]\nsm_mhz = [900, 1500]\npower_limit_w = [300, 600]\n") +
                          policy_for("gpus = \"all\"\n"));
  }

  std::filesystem::path client_dir() const { return dir / "client"; }
  std::filesystem::path client_setter_log() const { return client_dir() / "client-setters.log"; }

  // The client reads the fake GPUs itself (no root needed) with the same UUIDs; its
  // own setter log must stay empty, and it keeps no state file of the daemon's.
  EnvironmentChanges client_environment(EnvironmentChanges extra = {}) const {
    EnvironmentChanges environment = fake_nvml_environment("h200,h200", {});
    environment["DVFSLAB_FAKE_NVML_LOG"] = client_setter_log().string();
    environment["DVFSLAB_DAEMON_SOCKET"] = daemon->socket().string();
    environment["DVFSLAB_STATE_DIR"] = (client_dir() / "state").string();
    environment["HOME"] = client_dir().string();
    for (auto& [name, value] : extra) environment[name] = value;
    return environment;
  }

  // `dvfslab ARGUMENTS` run as the test user: its exit code, stdout and stderr.
  ProcessResult dvfslab_as_user(const std::vector<std::string>& arguments, EnvironmentChanges extra = {}) {
    const EnvironmentChanges environment = client_environment(std::move(extra));
    ProcessResult result;
    const ChildResult child = run_as(user, [&](std::string& report) {
      const ProcessResult run = run_process_with_limit(DVFSLAB_BINARY, arguments, environment, 60s);
      report = run.out + "\n--- stderr ---\n" + run.err;
      return run.exit_code;
    });
    result.exit_code = child.exit_code;
    const auto split = child.report.find("\n--- stderr ---\n");
    result.out = child.report.substr(0, split);
    result.err = split == std::string::npos ? "" : child.report.substr(split + 16);
    return result;
  }

  std::unique_ptr<DaemonUnderTest> daemon;
};

TEST_F(DaemonClientTest, HoldAsTheUserChangesTheGpuThroughTheDaemonAndItIsRestored) {
  const ProcessResult hold = dvfslab_as_user({"hold", "--device", "0", "--sm", "1200", "--power-limit", "400",
                                              "--allow-clock-changes", "--seconds", "1"});
  ASSERT_EQ(hold.exit_code, 0) << hold.err;
  EXPECT_NE(hold.out.find("holding sm=1200 mem=default pl=400"), std::string::npos) << hold.out;
  const std::string setters = read_setter_log(setter_log());
  EXPECT_NE(setters.find("nvmlDeviceSetGpuLockedClocks device=0 min_mhz=1200 max_mhz=1200"),
            std::string::npos)
      << setters;
  EXPECT_NE(setters.find("nvmlDeviceSetPowerManagementLimit device=0 limit_mw=400000"), std::string::npos);
  EXPECT_TRUE(wait_for_controls(0, controls_an_administrator_left(), 1000ms))
      << fake_gpu_controls(state_file(), 0);
  EXPECT_FALSE(std::filesystem::exists(client_setter_log())) << "the client never calls an NVML setter";
  EXPECT_FALSE(restore_journal_in(daemon->state_dir()));
  EXPECT_NE(daemon->audit().find("user=" + test_user_name), std::string::npos);
}

// The daemon-backed GPU shows the clock table and power-limit range within the
// policy's bounds, so the command's own validation refuses, naming the allowed range,
// before any request (the daemon's refusal is DaemonTest.AValueOutsideThePolicys...).
TEST_F(DaemonClientTest, ASettingOutsideThePolicyIsRefusedNamingTheAllowedRangeBeforeAnyLease) {
  const ProcessResult hold =
      dvfslab_as_user({"hold", "--device", "0", "--sm", "1800", "--allow-clock-changes", "--seconds", "1"});
  EXPECT_EQ(hold.exit_code, 3) << hold.err;
  EXPECT_NE(
      hold.err.find("SM clock 1800 MHz is not supported by NVIDIA H200 at memory clock 3201 MHz; nearest "
                    "supported: 1500 MHz (900–1500 MHz, 41 clocks)"),
      std::string::npos)
      << hold.err;
  const ProcessResult power = dvfslab_as_user(
      {"hold", "--device", "0", "--power-limit", "650", "--allow-clock-changes", "--seconds", "1"});
  EXPECT_EQ(power.exit_code, 3) << power.err;
  EXPECT_NE(power.err.find("300–600 W"), std::string::npos) << power.err;
  EXPECT_EQ(read_setter_log(setter_log()), "");
  EXPECT_EQ(daemon->audit().find("request=lease"), std::string::npos) << daemon->audit();
}

TEST_F(DaemonClientTest, ReadOnlyModeForbidsEveryControlCallThroughTheDaemonToo) {
  const ProcessResult hold =
      dvfslab_as_user({"hold", "--device", "0", "--sm", "1200", "--allow-clock-changes", "--seconds", "1"},
                      {{"DVFSLAB_READ_ONLY", "1"}});
  EXPECT_EQ(hold.exit_code, 5) << hold.err;
  EXPECT_NE(hold.err.find("DVFSLAB_READ_ONLY=1 forbids every control call"), std::string::npos) << hold.err;
  EXPECT_EQ(read_setter_log(setter_log()), "");
  EXPECT_EQ(daemon->audit().find("request=lease"), std::string::npos) << daemon->audit();
}

TEST_F(DaemonClientTest, InfoSaysControlGoesThroughTheDaemonAndWhatThePolicyAllows) {
  const ProcessResult info = dvfslab_as_user({"info", "--device", "0"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("Control calls: through the dvfslab daemon at " + daemon->socket().string() +
                          " (not root, and the daemon's socket exists)"),
            std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("the daemon's policy for user " + test_user_name), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("GPU 0 ("), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("): control; SM clock 900–1500 MHz, memory clock the GPU's own range, power limit "
                          "300–600 W\n"),
            std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("GPU 1 (GPU-"), std::string::npos) << "info lists what the daemon serves:\n"
                                                             << info.out;
  const ProcessResult direct = dvfslab_as_user({"info", "--device", "0"}, {{"DVFSLAB_DAEMON", "never"}});
  EXPECT_NE(direct.out.find("Control calls: to the driver (DVFSLAB_DAEMON=never)"), std::string::npos)
      << direct.out;
}

TEST_F(DaemonClientTest, TuneAsTheUserRunsItsJobThroughTheDaemonAndRestores) {
  const ProcessResult tune = dvfslab_as_user(
      {"tune", "--device", "1", "--db", (client_dir() / "db.sqlite").string(), "--warmup-iters", "2",
       "--probe-iters", "3", "--", "bash", "-c",
       "for i in $(seq 40); do sleep 0.02; echo 'dvfslab:iter 1 items 8' >&$DVFSLAB_MARK_FD; done"});
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  const std::string setters = read_setter_log(setter_log());
  EXPECT_NE(setters.find("nvmlDeviceSetGpuLockedClocks device=1"), std::string::npos) << setters << tune.err;
  EXPECT_TRUE(wait_for_controls(1, controls_an_administrator_left(), 1000ms))
      << fake_gpu_controls(state_file(), 1);
  EXPECT_FALSE(std::filesystem::exists(client_setter_log())) << "the client never calls an NVML setter";
  EXPECT_NE(daemon->audit().find("request=apply sm="), std::string::npos) << daemon->audit();
}

// What a Slurm fleet shard runs (docs/slurm.md): a sweep shard, as a user who is not
// root, changes clocks and the power limit through the daemon and leaves the GPU as found.
TEST_F(DaemonClientTest, ASweepShardAsTheUserChangesSettingsThroughTheDaemonAndRestores) {
  const auto plan = client_dir() / "plan.toml";
  std::ofstream(plan) << "[knobs]\nsm_mhz = [1200, 1500]\npower_limit_w = [500]\n[[cases]]\nname = \"loop\"\n"
                         "command = [\"bash\", \"-c\", 'while :; do sleep 0.02; echo \"dvfslab:iter 1 items 8\" "
                         ">&$DVFSLAB_MARK_FD; done']\n[measure]\nwarmup_iterations = 1\nduration_s = 0.3\n"
                         "settle_s = 0\ndrift_check = false\ninclude_default = false\n";
  const ProcessResult shard =
      dvfslab_as_user({"sweep", plan.string(), "--device", "1", "--db", (client_dir() / "shard1.sqlite").string(),
                       "--shard", "1/2", "--allow-clock-changes"});
  ASSERT_EQ(shard.exit_code, 0) << shard.err;
  const std::string setters = read_setter_log(setter_log());
  EXPECT_NE(setters.find("nvmlDeviceSetGpuLockedClocks device=1 min_mhz=1200 max_mhz=1200"), std::string::npos)
      << setters << shard.err;
  EXPECT_NE(setters.find("nvmlDeviceSetPowerManagementLimit device=1 limit_mw=500000"), std::string::npos);
  EXPECT_EQ(setters.find("device=1 min_mhz=1500"), std::string::npos) << "shard 2/2's point:\n" << setters;
  EXPECT_TRUE(wait_for_controls(1, controls_an_administrator_left(), 1000ms))
      << fake_gpu_controls(state_file(), 1);
  EXPECT_FALSE(std::filesystem::exists(client_setter_log())) << "the client never calls an NVML setter";
  EXPECT_NE(daemon->audit().find("request=apply sm=1200"), std::string::npos) << daemon->audit();
}

TEST_F(DaemonClientTest, TheTunerProbesOnlyWithinThePolicysBounds) {
  const ProcessResult tune = dvfslab_as_user(
      {"tune", "--device", "0", "--knobs", "sm,pl", "--db", (client_dir() / "db.sqlite").string(),
       "--warmup-iters", "2", "--probe-iters", "3", "--", "bash", "-c",
       "for i in $(seq 60); do sleep 0.02; echo 'dvfslab:iter 1 items 8' >&$DVFSLAB_MARK_FD; done"});
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  const std::string setters = read_setter_log(setter_log());
  ASSERT_NE(setters.find("nvmlDeviceSetGpuLockedClocks device=0"), std::string::npos) << setters << tune.err;
  std::istringstream lines(setters);
  for (std::string line; std::getline(lines, line);) {
    int value = 0;
    if (std::sscanf(line.c_str(), "nvmlDeviceSetGpuLockedClocks device=0 min_mhz=%d", &value) == 1) {
      EXPECT_GE(value, 900) << line;
      EXPECT_LE(value, 1500) << line;
    }
    if (std::sscanf(line.c_str(), "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=%d", &value) == 1 &&
        value != 450000) {
      EXPECT_GE(value, 300000) << line;
      EXPECT_LE(value, 600000) << line;
    }
  }
  EXPECT_EQ(daemon->audit().find("refused"), std::string::npos) << daemon->audit();
  EXPECT_TRUE(wait_for_controls(0, controls_an_administrator_left(), 1000ms))
      << fake_gpu_controls(state_file(), 0);
}

TEST_F(DaemonClientTest, ThePythonTunerAsTheUserTunesThroughTheDaemonAndRestores) {
#ifndef DVFSLAB_PYTHON_BUILD_DIR
  GTEST_SKIP() << "the Python package is not built (DVFSLAB_WITH_PYTHON)";
#else
  const std::string script =
      "import os, time, dvfslab\n"
      "gpu = dvfslab.open('1', allow_clock_changes=True, nvml_library=os.environ['DVFSLAB_NVML_LIBRARY'])\n"
      "with dvfslab.Tuner(gpu, objective='energy', knobs='sm', warmup_iters=2, probe_iters=3) as tuner:\n"
      "    for _ in range(40):\n"
      "        with tuner.step(items=8):\n"
      "            time.sleep(0.01)\n"
      "print('held', tuner.report()['held'])\n";
  const EnvironmentChanges environment = client_environment({{"PYTHONPATH", DVFSLAB_PYTHON_BUILD_DIR}});
  const ChildResult child = run_as(user, [&](std::string& report) {
    const ProcessResult run = run_process_with_limit(DVFSLAB_PYTHON3, {"-c", script}, environment, 60s);
    report = run.out + run.err;
    return run.exit_code;
  });
  ASSERT_EQ(child.exit_code, 0) << child.report;
  EXPECT_NE(child.report.find("held "), std::string::npos) << child.report;
  const std::string setters = read_setter_log(setter_log());
  EXPECT_NE(setters.find("nvmlDeviceSetGpuLockedClocks device=1"), std::string::npos)
      << setters << child.report;
  EXPECT_TRUE(wait_for_controls(1, controls_an_administrator_left(), 1000ms))
      << fake_gpu_controls(state_file(), 1);
  EXPECT_FALSE(std::filesystem::exists(client_setter_log())) << "the client never calls an NVML setter";
#endif
}

}  // namespace
}  // namespace dvfslab::testing
