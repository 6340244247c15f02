#include "fake_state.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string_view>

#include "dvfslab/error.hpp"

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

unsigned architecture_code(std::string_view architecture) {
  static constexpr std::string_view names[] = {"Kepler", "Maxwell", "Pascal", "Volta", "Turing",
                                               "Ampere", "Ada", "Hopper", "Blackwell"};
  for (unsigned i = 0; i < std::size(names); ++i) {
    if (names[i] == architecture) return i + 2;  // NVML numbers Kepler as 2
  }
  return nvml::arch_unknown;
}

std::unique_ptr<State> build_state() {
  auto built = std::make_unique<State>();
  built->faults.init_fails = flag("DVFSLAB_FAKE_NVML_NO_DRIVER");
  built->faults.setters_no_permission = flag("DVFSLAB_FAKE_NVML_NO_PERMISSION");
  built->faults.energy_not_supported = flag("DVFSLAB_FAKE_NVML_NO_ENERGY");
  if (const std::string lost = environment("DVFSLAB_FAKE_NVML_LOST_AFTER"); !lost.empty()) {
    built->faults.lost_after_calls = std::stol(lost);
  }
  built->log_path = environment("DVFSLAB_FAKE_NVML_LOG");

  const std::string keys = environment("DVFSLAB_FAKE_NVML_GPUS", "h200");
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
    const auto hash = static_cast<unsigned long long>(std::hash<std::string>{}(key));
    device.uuid = fmt::format("GPU-{:08x}-fa4e-4d1b-9c2e-{:012x}", static_cast<unsigned>(hash >> 32),
                              (hash & 0xffffffffffffULL) + static_cast<unsigned>(device.index));
    device.pci_bus_id = fmt::format("00000000:{:02X}:00.0", 0x18 + 0x10 * device.index);
    device.architecture = architecture_code(device.gpu->spec().architecture);
    built->devices.push_back(std::move(device));
  }
  return built;
}

}  // namespace

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
