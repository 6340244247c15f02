#include "fake_state.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string_view>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu_json.hpp"
#include "fake_profiles.hpp"

namespace dvfslab::fake_nvml {
namespace {

std::unique_ptr<State> current_state;
int init_count = 0;

std::string environment(const char* name, std::string_view fallback = {}) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : std::string(fallback);
}

bool flag(const char* name) {
  const std::string value = environment(name);
  return !value.empty() && value != "0";
}

// "1,3" as device indices; Error naming the variable for anything else.
std::vector<int> device_indices(const char* name) {
  std::vector<int> indices;
  const std::string list = environment(name);
  std::size_t start = 0;
  while (start < list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    start = comma + 1;
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) {
      throw Error(fmt::format("fake NVML: {}={} is not a list of device indices like 1,3", name, list));
    }
    indices.push_back(std::stoi(item));
  }
  return indices;
}

unsigned architecture_code(std::string_view architecture) {
  static constexpr std::string_view names[] = {"Kepler", "Maxwell", "Pascal", "Volta",    "Turing",
                                               "Ampere", "Ada",     "Hopper", "Blackwell"};
  for (unsigned i = 0; i < std::size(names); ++i) {
    if (names[i] == architecture) return i + 2;  // NVML numbers Kepler as 2
  }
  return nvml::arch_unknown;
}

// What a previous process left of each device, by device index; {} without a file.
struct PersistedDevice {
  ControlState controls;
  std::vector<int> requested_profiles;
};

std::vector<PersistedDevice> persisted_devices(const std::string& path) {
  std::vector<PersistedDevice> states;
  std::ifstream in(path);
  if (!in) return states;
  try {
    // Kept in a variable: a range-for over a member of the temporary parse() returns
    // would iterate a destroyed object (the temporary's life is not extended).
    const nlohmann::json document = nlohmann::json::parse(in);
    for (const nlohmann::json& device : document.at("devices")) {
      states.push_back({device.at("controls").get<ControlState>(),
                        device.value("requested_profiles", std::vector<int>{})});
    }
  } catch (const std::exception& e) {
    throw Error(fmt::format("fake NVML: unreadable DVFSLAB_FAKE_NVML_STATE file {}: {}", path, e.what()));
  }
  return states;
}

std::vector<int> requested_profiles(const FakeDevice& device) {
  const auto profiles = device.gpu->read_workload_power_profiles();
  return profiles ? profiles->requested : std::vector<int>{};
}

void write_control_state(const State& state) {
  nlohmann::json devices = nlohmann::json::array();
  for (const FakeDevice& device : state.devices) {
    devices.push_back({{"index", device.index},
                       {"uuid", device.uuid},
                       {"controls", device.gpu->control_state()},
                       {"requested_profiles", requested_profiles(device)}});
  }
  // Written aside and renamed, so a process killed mid-write leaves the old file.
  const std::string temporary = fmt::format("{}.tmp.{}", state.state_path, ::getpid());
  std::ofstream(temporary) << nlohmann::json{{"devices", devices}}.dump(2) << "\n";
  std::filesystem::rename(temporary, state.state_path);
}

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

// A whole non-negative decimal number up to `most`, or nullopt.
std::optional<unsigned long> whole_number(std::string_view text, unsigned long most) {
  unsigned long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value > most) return std::nullopt;
  return value;
}

FakeDevice& device_named(State& state, std::string_view index, const char* variable) {
  const auto found = whole_number(index, state.devices.size());
  if (!found || *found >= state.devices.size()) {
    throw Error(fmt::format("{} names device '{}', but there are {} devices (from index 0)", variable, index,
                            state.devices.size()));
  }
  return state.devices[*found];
}

// DVFSLAB_FAKE_NVML_MIG=INDEX[,INDEX...]: the devices in MIG mode.
void read_mig_devices(State& state) {
  for (const std::string& index : comma_list(environment("DVFSLAB_FAKE_NVML_MIG"))) {
    device_named(state, index, "DVFSLAB_FAKE_NVML_MIG").mig_enabled = true;
  }
}

// DVFSLAB_FAKE_NVML_PROCESSES=INDEX:PID[,INDEX:PID...]: compute processes per device.
void read_compute_processes(State& state) {
  for (const std::string& entry : comma_list(environment("DVFSLAB_FAKE_NVML_PROCESSES"))) {
    const std::size_t colon = entry.find(':');
    const auto pid = colon == std::string::npos
                         ? std::nullopt
                         : whole_number(std::string_view(entry).substr(colon + 1), 0xffffffffUL);
    if (!pid) {
      throw Error(fmt::format("DVFSLAB_FAKE_NVML_PROCESSES entry '{}' is not INDEX:PID", entry));
    }
    device_named(state, entry.substr(0, colon), "DVFSLAB_FAKE_NVML_PROCESSES")
        .compute_pids.push_back(static_cast<unsigned>(*pid));
  }
}

}  // namespace

std::vector<unsigned> compute_pids_now(const State& state, const FakeDevice& device) {
  std::vector<unsigned> pids = device.compute_pids;
  if (state.processes_path.empty()) return pids;
  const auto index = static_cast<unsigned long>(&device - state.devices.data());
  std::ifstream file(state.processes_path);
  std::string line;
  while (std::getline(file, line)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto named = whole_number(std::string_view(line).substr(0, colon), state.devices.size());
    const auto pid = whole_number(std::string_view(line).substr(colon + 1), 0xffffffffUL);
    if (named && pid && *named == index) pids.push_back(static_cast<unsigned>(*pid));
  }
  return pids;
}

namespace {

std::unique_ptr<State> build_state() {
  auto built = std::make_unique<State>();
  built->faults.init_fails = flag("DVFSLAB_FAKE_NVML_NO_DRIVER");
  built->faults.setters_no_permission = flag("DVFSLAB_FAKE_NVML_NO_PERMISSION");
  built->faults.no_permission_devices = device_indices("DVFSLAB_FAKE_NVML_NO_PERMISSION_DEVICES");
  built->faults.energy_not_supported = flag("DVFSLAB_FAKE_NVML_NO_ENERGY");
  if (const std::string lost = environment("DVFSLAB_FAKE_NVML_LOST_AFTER"); !lost.empty()) {
    built->faults.lost_after_calls = std::stol(lost);
  }
  if (const std::string floor = environment("DVFSLAB_FAKE_NVML_CLOCK_FLOOR_MHZ"); !floor.empty()) {
    if (floor.size() > 5 || floor.find_first_not_of("0123456789") != std::string::npos)
      throw Error(
          fmt::format("fake NVML: DVFSLAB_FAKE_NVML_CLOCK_FLOOR_MHZ={} is not a clock in MHz", floor));
    built->faults.sm_clock_floor_mhz = static_cast<unsigned>(std::stoul(floor));
  }
  built->log_path = environment("DVFSLAB_FAKE_NVML_LOG");

  const std::string keys = environment("DVFSLAB_FAKE_NVML_GPUS", "h200");
  // GPU locks are per UUID for the whole machine: tests running side by side give
  // their fakes different UUIDs through this salt.
  const std::string uuid_salt = environment("DVFSLAB_FAKE_NVML_UUID_SALT");
  std::size_t start = 0;
  while (start <= keys.size()) {
    const std::size_t comma = std::min(keys.find(',', start), keys.size());
    const std::string key = keys.substr(start, comma - start);
    start = comma + 1;
    if (key.empty()) continue;
    FakeDevice device;
    device.index = static_cast<int>(built->devices.size());
    device.gpu = std::make_unique<SimGpu>(sim_gpu_spec(key), SimTimeMode::wall_time, device.index);
    // Stable, NVML-shaped identifiers derived from the model and position.
    const auto hash = static_cast<unsigned long long>(std::hash<std::string>{}(uuid_salt + key));
    device.uuid = fmt::format("GPU-{:08x}-fa4e-4d1b-9c2e-{:012x}", static_cast<unsigned>(hash >> 32),
                              (hash & 0xffffffffffffULL) + static_cast<unsigned>(device.index));
    device.pci_bus_id = fmt::format("00000000:{:02X}:00.0", 0x18 + 0x10 * device.index);
    device.architecture = architecture_code(device.gpu->spec().architecture);
    device.profiles_hidden = hides_profiles(environment("DVFSLAB_FAKE_NVML_PROFILES"));
    built->devices.push_back(std::move(device));
  }
  read_mig_devices(*built);
  read_compute_processes(*built);

  built->state_path = environment("DVFSLAB_FAKE_NVML_STATE");
  built->processes_path = environment("DVFSLAB_FAKE_NVML_PROCESSES_FILE");
  built->busy_path = environment("DVFSLAB_FAKE_NVML_BUSY_FILE");
  built->energy_log_path = environment("DVFSLAB_FAKE_NVML_ENERGY_LOG");
  if (!built->state_path.empty()) {
    const std::vector<PersistedDevice> persisted = persisted_devices(built->state_path);
    for (std::size_t i = 0; i < persisted.size() && i < built->devices.size(); ++i) {
      built->devices[i].gpu->load_controls(persisted[i].controls);
      if (!persisted[i].requested_profiles.empty()) {
        built->devices[i].gpu->load_requested_workload_power_profiles(persisted[i].requested_profiles);
      }
    }
    write_control_state(*built);
  }
  return built;
}

}  // namespace

bool refuses_setters(const Faults& faults, int device) {
  return faults.setters_no_permission ||
         std::find(faults.no_permission_devices.begin(), faults.no_permission_devices.end(), device) !=
             faults.no_permission_devices.end();
}

std::mutex& state_mutex() {
  static std::mutex mutex;
  return mutex;
}

nvml::Return initialise() {
  if (init_count == 0) {
    auto built = build_state();
    if (built->faults.init_fails) return nvml::error_driver_not_loaded;
    current_state = std::move(built);
  }
  ++init_count;
  return nvml::success;
}

nvml::Return shut_down() {
  if (init_count == 0) return nvml::error_uninitialized;
  if (--init_count == 0) current_state.reset();
  return nvml::success;
}

State* state() { return current_state.get(); }

FakeDevice* device_of(nvml::Device handle) {
  if (!current_state) return nullptr;
  for (FakeDevice& device : current_state->devices) {
    if (reinterpret_cast<nvml::Device>(&device) == handle) return &device;
  }
  return nullptr;
}

nvml::Device handle_of(FakeDevice& device) { return reinterpret_cast<nvml::Device>(&device); }

nvml::Return count_device_call() {
  ++current_state->device_calls;
  const auto& budget = current_state->faults.lost_after_calls;
  return budget && current_state->device_calls > *budget ? nvml::error_gpu_is_lost : nvml::success;
}

void log_setter_call(const std::string& line) {
  if (current_state->log_path.empty()) return;
  // Opened per line and closed at once, so the log survives a killed process.
  if (std::FILE* file = std::fopen(current_state->log_path.c_str(), "a")) {
    std::fputs((line + "\n").c_str(), file);
    std::fclose(file);
  }
}

void log_energy_reading(const FakeDevice& device, unsigned long long millijoules, double time_s) {
  if (current_state->energy_log_path.empty()) return;
  if (std::FILE* file = std::fopen(current_state->energy_log_path.c_str(), "a")) {
    std::fputs(fmt::format("energy {} {} {:.6f}\n", device.index, millijoules, time_s).c_str(), file);
    std::fclose(file);
  }
}

void save_control_state() {
  if (!current_state->state_path.empty()) write_control_state(*current_state);
}

nvml::Return code_for_current_exception() {
  try {
    throw;
  } catch (const PermissionError&) {
    return nvml::error_no_permission;
  } catch (const NotSupportedError&) {
    return nvml::error_not_supported;
  } catch (const GpuLostError&) {
    return nvml::error_gpu_is_lost;
  } catch (const ConfigError&) {
    return nvml::error_invalid_argument;
  } catch (...) {
    return nvml::error_unknown;
  }
}

}  // namespace dvfslab::fake_nvml
