#pragma once
// The fixture of the daemon's tests: a scratch directory, two fake H200s left by an
// administrator at a non-default state, the setter log, and a user for the clients.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "daemon/daemon_harness.hpp"
#include "dvfslab/daemon.hpp"
#include "dvfslab/error.hpp"
#include "integration/fake_nvml_env.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {

inline const std::string test_user_name = "dvfslab-test";
inline const std::string stranger_user_name = "dvfslab-stranger";

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!running_as_root()) GTEST_SKIP() << "the daemon runs as root: run these tests as root";
    user = ensure_test_user(test_user_name);
    write_fake_gpu_state(state_file(), 2, controls_an_administrator_left());
  }

  std::filesystem::path state_file() const { return dir / "gpu-state.json"; }
  std::filesystem::path setter_log() const { return dir / "setters.log"; }

  EnvironmentChanges environment() const {
    return fake_nvml_environment("h200,h200", {{"DVFSLAB_FAKE_NVML_STATE", state_file().string()},
                                               {"DVFSLAB_FAKE_NVML_LOG", setter_log().string()}});
  }

  std::string policy_for(const std::string& rule_body) const {
    return "[[rule]]\nusers = [\"" + test_user_name + "\"]\n" + rule_body;
  }

  std::unique_ptr<DaemonUnderTest> start_daemon(const std::string& policy,
                                                std::vector<std::string> extra_arguments = {}) {
    auto daemon =
        std::make_unique<DaemonUnderTest>(dir.path(), policy, environment(), std::move(extra_arguments));
    EXPECT_TRUE(daemon->start()) << daemon->error();
    return daemon;
  }

  // Waits up to `limit` for fake GPU `index` to read `expected`; the time it took, or nullopt.
  std::optional<std::chrono::milliseconds> wait_for_controls(int index, const nlohmann::json& expected,
                                                             std::chrono::milliseconds limit) const {
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < limit) {
      if (fake_gpu_controls(state_file(), index) == expected)
        return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                     start);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return std::nullopt;
  }

  // Waits up to 2 s for the daemon's audit log to hold `text`: it writes a
  // connection's last lines after restoring, so a test that saw the GPU restored
  // reads them from here.
  bool wait_for_audit(const DaemonUnderTest& daemon, const std::string& text) const {
    const auto start = std::chrono::steady_clock::now();
    while (daemon.audit().find(text) == std::string::npos) {
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(2)) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  ScratchDir dir;
  TestUser user;
};

// One request as the client sends it, answered or refused: "ok" or the refusal's message.
inline std::string outcome(DaemonConnection& connection, const nlohmann::json& request) {
  try {
    connection.request(request);
    return "ok";
  } catch (const Error& e) {
    return e.what();
  }
}

inline nlohmann::json lease_request(const std::vector<std::string>& gpus) {
  return {{"op", "lease"}, {"gpus", gpus}};
}

inline nlohmann::json apply_request(const std::string& gpu, std::optional<int> sm_mhz,
                                    std::optional<int> mem_mhz, std::optional<int> power_limit_w) {
  const auto value = [](const std::optional<int>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"op", "apply"},
          {"settings",
           {{{"gpu", gpu},
             {"sm_mhz", value(sm_mhz)},
             {"mem_mhz", value(mem_mhz)},
             {"power_limit_w", value(power_limit_w)}}}}};
}

}  // namespace dvfslab::testing
