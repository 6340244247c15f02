#pragma once
// Environments that point dvfslab at the fake NVML (tools/fake_nvml), for tests
// that run the binary (fake_nvml_environment) or the library in-process
// (ScopedEnvironment).
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "run_process.hpp"

namespace dvfslab::testing {

// The variables the fake reads, so that a test starts from none of them set.
inline const std::vector<std::string> fake_nvml_variables = {"DVFSLAB_FAKE_NVML_GPUS",
                                                             "DVFSLAB_FAKE_NVML_NO_DRIVER",
                                                             "DVFSLAB_FAKE_NVML_NO_PERMISSION",
                                                             "DVFSLAB_FAKE_NVML_NO_ENERGY",
                                                             "DVFSLAB_FAKE_NVML_LOST_AFTER",
                                                             "DVFSLAB_FAKE_NVML_LOG",
                                                             "DVFSLAB_FAKE_NVML_STATE",
                                                             "DVFSLAB_FAKE_NVML_UUID_SALT",
                                                             "DVFSLAB_FAKE_NVML_NO_PERMISSION_DEVICES",
                                                             "DVFSLAB_FAKE_NVML_MIG",
                                                             "DVFSLAB_FAKE_NVML_PROCESSES",
                                                             "DVFSLAB_FAKE_NVML_PROCESSES_FILE",
                                                             "DVFSLAB_FAKE_NVML_BUSY_FILE",
                                                             "DVFSLAB_FAKE_NVML_ENERGY_LOG",
                                                             "DVFSLAB_FAKE_NVML_PROFILES",
                                                             "DVFSLAB_FAKE_NVML_CLOCK_FLOOR_MHZ"};

// A salt no other test on this machine uses, the same for every call within one
// test (this process's PID and the test's name): GPU locks are machine-wide per
// UUID, so tests running in parallel must not share a fake GPU's UUID, while the
// runs of one test must see the same GPU.
inline std::string unique_fake_uuid_salt() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = test != nullptr ? std::string(test->test_suite_name()) + "." + test->name() : "";
  return std::to_string(::getpid()) + "-" + name;
}

// dvfslab loads `library` (the current-driver fake by default) simulating `gpus`
// ("h200" or "h200,v100") with UUIDs of their own (unique_fake_uuid_salt);
// `extra` adds or overrides variables. Read-only mode is off unless `extra` sets it.
inline EnvironmentChanges fake_nvml_environment(const std::string& gpus, EnvironmentChanges extra = {},
                                                const std::string& library = DVFSLAB_FAKE_NVML) {
  EnvironmentChanges environment;
  for (const std::string& name : fake_nvml_variables) environment[name] = std::nullopt;
  environment["DVFSLAB_READ_ONLY"] = std::nullopt;
  // A job's GPU list on the machine running the tests would hide fake GPUs.
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"})
    environment[name] = std::nullopt;
  environment["DVFSLAB_NVML_LIBRARY"] = library;
  environment["DVFSLAB_FAKE_NVML_GPUS"] = gpus;
  environment["DVFSLAB_FAKE_NVML_UUID_SALT"] = unique_fake_uuid_salt();
  for (auto& [name, value] : extra) environment[name] = std::move(value);
  return environment;
}

// The options the CLI's edge reads from this process's environment (the library
// reads none): the vendor libraries and read-only mode, for tests that open GPUs
// in-process under a ScopedEnvironment.
inline OpenOptions open_options_from_environment() {
  OpenOptions options;
  if (const char* library = std::getenv("DVFSLAB_NVML_LIBRARY")) options.libraries["nvml"] = library;
  if (const char* library = std::getenv("DVFSLAB_ROCM_LIBRARY")) options.libraries["rocm"] = library;
  const char* read_only = std::getenv("DVFSLAB_READ_ONLY");
  options.read_only = read_only != nullptr && std::string(read_only) != "" && std::string(read_only) != "0";
  return options;
}

// Applies environment changes to this process and undoes them when destroyed.
class ScopedEnvironment {
 public:
  explicit ScopedEnvironment(const EnvironmentChanges& changes) {
    for (const auto& [name, value] : changes) {
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      apply(name, value);
    }
  }
  ~ScopedEnvironment() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) apply(it->first, it->second);
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  static void apply(const std::string& name, const std::optional<std::string>& value) {
    if (value) {
      setenv(name.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// The fake's setter log (DVFSLAB_FAKE_NVML_LOG) as text; "" before the first call.
inline std::string read_setter_log(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether dvfslab left a restore journal in `state_dir` (a change not yet undone).
inline bool restore_journal_in(const std::filesystem::path& state_dir) {
  for (const auto& entry : std::filesystem::directory_iterator(state_dir)) {
    if (entry.path().filename().string().starts_with("journal-")) return true;
  }
  return false;
}

// The control state of an H200 as an administrator left it (application clocks at
// their defaults, the power limit lowered to 450 W, no lock), for a
// DVFSLAB_FAKE_NVML_STATE file: restoring must put back 450 W, not the 700 W default.
inline nlohmann::json controls_an_administrator_left() {
  return {
      {"locked_sm_min_mhz", nullptr},  {"locked_sm_max_mhz", nullptr},     {"locked_mem_min_mhz", nullptr},
      {"locked_mem_max_mhz", nullptr}, {"application_graphics_mhz", 1980}, {"application_memory_mhz", 3201},
      {"power_limit_w", 450.0}};
}

}  // namespace dvfslab::testing
