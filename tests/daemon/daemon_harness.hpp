#pragma once
// What the daemon's tests and its benchmark share: an unprivileged user made for
// the test, client code run as that user in a child process, the real `dvfslab
// daemon` started as root on the fake NVML, and the fake GPUs' state as it is on disk.
#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "file_text.hpp"
#include "integration/background_process.hpp"
#include "integration/run_process.hpp"

namespace dvfslab::testing {

struct TestUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
};

bool running_as_root();
// The user `name` (a system user without a home or shell), created when missing.
TestUser ensure_test_user(const std::string& name);

// The result of client code run as a user: its exit code and what it reported.
struct ChildResult {
  int exit_code = -1;
  std::string report;
};

// Runs `body` in a forked child as `user` (groups, gid and uid dropped for good) and
// waits for it. `body` writes what the test should see into its argument and
// returns the exit code.
ChildResult run_as(const TestUser& user, const std::function<int(std::string& report)>& body);

// A child running as `user` that the test kills: `body` calls `ready(message)` once it
// holds what the test wants to interrupt; ready() never returns, so the child keeps
// what it holds until it is killed.
class UserChild {
 public:
  UserChild(const TestUser& user,
            const std::function<void(const std::function<void(const std::string&)>& ready)>& body);
  ~UserChild();
  UserChild(const UserChild&) = delete;
  UserChild& operator=(const UserChild&) = delete;

  // What the child passed to ready(), or nullopt when it ended without calling it.
  std::optional<std::string> wait_until_ready();
  void kill_now();  // SIGKILL
  int wait();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int ready_fd_ = -1;
  bool reaped_ = false;
};

// `dvfslab daemon` in the background, as root, on the fake NVML.
class DaemonUnderTest {
 public:
  // Files in `dir`: policy.toml, dvfslabd.sock, state/ (journals), audit.log, daemon.err.
  DaemonUnderTest(std::filesystem::path dir, const std::string& policy_text, EnvironmentChanges environment,
                  std::vector<std::string> extra_arguments = {});
  ~DaemonUnderTest();

  // Starts it and waits until it listens; false (with its stderr in `error()`) when it ends first.
  bool start();
  void kill_now();              // SIGKILL, then reaped
  int stop(int signal_number);  // its exit code

  const std::filesystem::path& socket() const { return socket_; }
  const std::filesystem::path& state_dir() const { return state_dir_; }
  std::string audit() const;
  std::string error() const;

 private:
  std::filesystem::path dir_, socket_, state_dir_;
  EnvironmentChanges environment_;
  std::vector<std::string> extra_arguments_;
  std::unique_ptr<BackgroundProcess> process_;
};

// The controls of fake GPU `index` as the fake NVML last saved them (DVFSLAB_FAKE_NVML_STATE).
nlohmann::json fake_gpu_controls(const std::filesystem::path& state_file, int index);
// Writes a state file of `count` GPUs each left by an administrator as `controls`.
void write_fake_gpu_state(const std::filesystem::path& state_file, int count, const nlohmann::json& controls);

}  // namespace dvfslab::testing
