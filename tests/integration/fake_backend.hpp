#pragma once
// The fake vendor libraries as one test parameter: the same CLI tests run on the
// fake NVML (tools/fake_nvml, a simulated H200) and the fake ROCm SMI
// (tools/fake_rocm_smi, a simulated MI300X). Each backend says how to point
// dvfslab at its fake, how it names GPU 0, a setting to hold, and what its setter
// log and state file show.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "fake_nvml_env.hpp"
#include "run_process.hpp"

namespace dvfslab::testing {

struct FakeBackend {
  std::string name;                    // for test names: "Nvml", "RocmSmi"
  std::string device;                  // --device of the first fake GPU
  std::string gpu_name;                // as dvfslab reports it
  std::string log_variable;            // the setter log the fake appends to
  std::string no_permission_variable;  // makes every setter answer "no permission"
  std::string state_variable;          // the control-state file that outlives a process
  std::function<EnvironmentChanges(EnvironmentChanges extra)> environment;  // one fake GPU
  // Found before dvfslab starts: its power limit lowered to 450 W by an administrator.
  nlohmann::json controls_an_administrator_left;
  std::string power_key;                    // the power limit's field in the state file's controls
  std::vector<std::string> hold_arguments;  // hold SM, memory and power at once
  nlohmann::json held_controls;             // the state-file fields that setting shows
  std::size_t hold_calls = 0;               // setter calls that hold makes
  // The setter calls that put the held setting back to what the administrator left.
  std::vector<std::string> restore_calls;
  std::string power_setter;                          // the setter function of the power limit
  std::function<std::string(int watts)> power_call;  // the setter call of a power limit
  std::string power_restored_text;                   // how `hold` reports putting 450 W back
  std::string unsupported_sm_mhz;                    // an SM clock the GPU does not list
  std::string nearest_clocks_text;                   // what dvfslab suggests for it
  std::string power_range_text;                      // the GPU's power-limit range
  std::vector<std::string> sweep_sm_mhz;             // two SM clocks of the GPU for a sweep
  std::string gpus_variable;                         // the simulated models the fake has
  std::string model;                                 // the model of its GPUs here
  std::string second_device;                         // --device of the second fake GPU
  std::string power_knob;                            // the journal's name of the power-limit knob
  std::string power_word;                            // how a refused journal names a power limit
  std::string sm_lock_call;                          // the setter call that holds the first of them
};

inline void PrintTo(const FakeBackend& backend, std::ostream* out) { *out << backend.name; }

inline std::string backend_test_name(const ::testing::TestParamInfo<FakeBackend>& info) {
  return info.param.name;
}

// The variables the fake ROCm SMI reads, so that a test starts from none of them set.
inline const std::vector<std::string> fake_rocm_variables = {
    "DVFSLAB_FAKE_ROCM_GPUS", "DVFSLAB_FAKE_ROCM_NO_DRIVER", "DVFSLAB_FAKE_ROCM_NO_PERMISSION",
    "DVFSLAB_FAKE_ROCM_LOG",  "DVFSLAB_FAKE_ROCM_STATE",     "DVFSLAB_FAKE_ROCM_UUID_SALT"};

// dvfslab loads the fake ROCm SMI simulating `gpus` ("mi300x" or "mi250x,mi300x")
// with unique ids of their own (unique_fake_uuid_salt); `extra` adds or overrides
// variables. Read-only mode is off unless `extra` sets it.
inline EnvironmentChanges fake_rocm_environment(const std::string& gpus, EnvironmentChanges extra = {}) {
  EnvironmentChanges environment;
  for (const std::string& name : fake_rocm_variables) environment[name] = std::nullopt;
  environment["DVFSLAB_READ_ONLY"] = std::nullopt;
  environment["DVFSLAB_ROCM_LIBRARY"] = DVFSLAB_FAKE_ROCM_SMI;
  environment["DVFSLAB_FAKE_ROCM_GPUS"] = gpus;
  environment["DVFSLAB_FAKE_ROCM_UUID_SALT"] = unique_fake_uuid_salt();
  for (auto& [name, value] : extra) environment[name] = std::move(value);
  return environment;
}

inline FakeBackend nvml_fake_backend() {
  FakeBackend backend;
  backend.name = "Nvml";
  backend.device = "0";
  backend.gpu_name = "NVIDIA H200";
  backend.log_variable = "DVFSLAB_FAKE_NVML_LOG";
  backend.no_permission_variable = "DVFSLAB_FAKE_NVML_NO_PERMISSION";
  backend.state_variable = "DVFSLAB_FAKE_NVML_STATE";
  backend.environment = [](EnvironmentChanges extra) {
    return fake_nvml_environment("h200", std::move(extra));
  };
  backend.controls_an_administrator_left = controls_an_administrator_left();
  backend.power_key = "power_limit_w";
  backend.hold_arguments = {"--sm", "1200", "--mem", "2201", "--power-limit", "400"};
  backend.held_controls = {
      {"locked_sm_max_mhz", 1200}, {"locked_mem_max_mhz", 2201}, {"power_limit_w", 400.0}};
  backend.hold_calls = 3;
  backend.restore_calls = {"nvmlDeviceResetGpuLockedClocks device=0",
                           "nvmlDeviceResetMemoryLockedClocks device=0",
                           "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=450000"};
  backend.power_setter = "nvmlDeviceSetPowerManagementLimit";
  backend.power_call = [](int watts) {
    return "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=" + std::to_string(watts * 1000);
  };
  backend.power_restored_text = "restored NVIDIA H200 (power limit set back to 450 W)";
  backend.unsupported_sm_mhz = "1234";
  backend.nearest_clocks_text = "nearest supported: 1230 MHz or 1245 MHz";
  backend.power_range_text = "200–700 W";
  backend.sweep_sm_mhz = {"1005", "1500"};
  backend.gpus_variable = "DVFSLAB_FAKE_NVML_GPUS";
  backend.model = "h200";
  backend.second_device = "1";
  backend.power_knob = "power_limit";
  backend.power_word = "a power limit";
  backend.sm_lock_call = "nvmlDeviceSetGpuLockedClocks device=0 min_mhz=1005 max_mhz=1005";
  return backend;
}

// The MI300X's SCLK levels are 500, 600, ... 2100 MHz (17, lowest first): 1200 MHz
// is level 7; its one MCLK level is 2600 MHz.
inline FakeBackend rocm_fake_backend() {
  FakeBackend backend;
  backend.name = "RocmSmi";
  backend.device = "amd:0";
  backend.gpu_name = "AMD Instinct MI300X";
  backend.log_variable = "DVFSLAB_FAKE_ROCM_LOG";
  backend.no_permission_variable = "DVFSLAB_FAKE_ROCM_NO_PERMISSION";
  backend.state_variable = "DVFSLAB_FAKE_ROCM_STATE";
  backend.environment = [](EnvironmentChanges extra) {
    return fake_rocm_environment("mi300x", std::move(extra));
  };
  backend.controls_an_administrator_left = {{"perf_level", "auto"}, {"power_cap_w", 450.0}};
  backend.power_key = "power_cap_w";
  backend.hold_arguments = {"--sm", "1200", "--mem", "2600", "--power-limit", "400"};
  backend.held_controls = {
      {"perf_level", "manual"}, {"sclk_mask", 0x80}, {"mclk_mask", 0x1}, {"power_cap_w", 400.0}};
  backend.hold_calls = 4;
  backend.restore_calls = {"rsmi_dev_gpu_clk_freq_set device=0 clock=sclk mask=0x1ffff",
                           "rsmi_dev_gpu_clk_freq_set device=0 clock=mclk mask=0x1",
                           "rsmi_dev_power_cap_set device=0 sensor=0 cap_uw=450000000",
                           "rsmi_dev_perf_level_set_v1 device=0 level=0"};
  backend.power_setter = "rsmi_dev_power_cap_set";
  backend.power_call = [](int watts) {
    return "rsmi_dev_power_cap_set device=0 sensor=0 cap_uw=" + std::to_string(watts) + "000000";
  };
  backend.power_restored_text = "restored AMD Instinct MI300X (power cap set back to 450 W)";
  backend.unsupported_sm_mhz = "1234";
  backend.nearest_clocks_text = "nearest supported: 1200 MHz or 1300 MHz";
  backend.power_range_text = "300–750 W";
  backend.sweep_sm_mhz = {"1000", "1500"};
  backend.gpus_variable = "DVFSLAB_FAKE_ROCM_GPUS";
  backend.model = "mi300x";
  backend.second_device = "amd:1";
  backend.power_knob = "power_cap";
  backend.power_word = "a power cap";
  backend.sm_lock_call = "rsmi_dev_gpu_clk_freq_set device=0 clock=sclk mask=0x20";  // level 5: 1000 MHz
  return backend;
}

// Every fake backend, for INSTANTIATE_TEST_SUITE_P.
inline std::vector<FakeBackend> fake_backends() { return {nvml_fake_backend(), rocm_fake_backend()}; }

}  // namespace dvfslab::testing
