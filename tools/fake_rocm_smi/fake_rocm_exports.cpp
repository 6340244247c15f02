// The ROCm SMI entry points the fake exports, under their own names and C linkage,
// with the signatures dvfslab declares (src/gpu/rocm/rocm_api.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "fake_rocm_state.hpp"

namespace rocm = dvfslab::rocm;
namespace fake = dvfslab::fake_rocm;

#define FAKE_ROCM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr double microwatts_per_watt = 1e6;
constexpr std::uint64_t hz_per_mhz = 1000000;
// Microjoules per count of the energy counter: not 1, so that a backend that
// forgot to multiply by the resolution reads the wrong energy.
constexpr float energy_resolution_uj = 15.3F;

template <class Body>
rocm::Status with_device(std::uint32_t index, Body&& body) {
  std::lock_guard lock(fake::state_mutex());
  fake::State* state = fake::state();
  if (state == nullptr) return rocm::status_init_error;
  if (index >= state->devices.size()) return rocm::status_invalid_args;
  try {
    return body(*state, state->devices[index]);
  } catch (...) {
    return rocm::status_internal_exception;
  }
}

// Logs a setter call, then answers PERMISSION when the fake refuses setters.
bool refused(const fake::State& state, const std::string& line) {
  fake::log_setter_call(line);
  return state.setters_no_permission;
}

rocm::Status copy_string(const std::string& text, char* buffer, std::size_t length) {
  if (buffer == nullptr || length == 0) return rocm::status_invalid_args;
  if (text.size() + 1 > length) return rocm::status_insufficient_size;
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return rocm::success;
}

const char* clock_name(rocm::ClockType type) { return type == rocm::clock_memory ? "mclk" : "sclk"; }

}  // namespace

FAKE_ROCM_EXPORT rocm::Status rsmi_init(std::uint64_t /*flags*/) {
  std::lock_guard lock(fake::state_mutex());
  return fake::initialise();
}

FAKE_ROCM_EXPORT rocm::Status rsmi_shut_down() {
  std::lock_guard lock(fake::state_mutex());
  return fake::shut_down();
}

FAKE_ROCM_EXPORT rocm::Status rsmi_status_string(rocm::Status status, const char** text) {
  if (text == nullptr) return rocm::status_invalid_args;
  switch (status) {
    case rocm::success: *text = "RSMI_STATUS_SUCCESS: The function has been executed successfully."; break;
    case rocm::status_permission:
      *text =
          "RSMI_STATUS_PERMISSION: The user ID of the calling process does not have sufficient permission to "
          "execute a command.";
      break;
    case rocm::status_invalid_args: *text = "RSMI_STATUS_INVALID_ARGS: Invalid arguments"; break;
    default: *text = "An unknown error occurred"; break;
  }
  return rocm::success;
}

FAKE_ROCM_EXPORT rocm::Status rsmi_version_get(rocm::Version* version) {
  if (version == nullptr) return rocm::status_invalid_args;
  *version = rocm::Version{5, 2, 3, "fake"};
  return rocm::success;
}

FAKE_ROCM_EXPORT rocm::Status rsmi_version_str_get(rocm::SoftwareComponent component, char* text,
                                                   std::uint32_t length) {
  if (component != rocm::component_driver) return rocm::status_invalid_args;
  return copy_string("0.0.0-fake", text, length);
}

FAKE_ROCM_EXPORT rocm::Status rsmi_num_monitor_devices(std::uint32_t* count) {
  std::lock_guard lock(fake::state_mutex());
  if (fake::state() == nullptr) return rocm::status_init_error;
  if (count == nullptr) return rocm::status_invalid_args;
  *count = static_cast<std::uint32_t>(fake::state()->devices.size());
  return rocm::success;
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_name_get(std::uint32_t index, char* name, std::size_t length) {
  return with_device(index, [&](fake::State&, fake::FakeDevice& device) {
    return copy_string(device.gpu->identity().name, name, length);
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_unique_id_get(std::uint32_t index, std::uint64_t* id) {
  return with_device(index, [&](fake::State&, fake::FakeDevice& device) {
    if (id == nullptr) return rocm::status_invalid_args;
    *id = device.unique_id;
    return rocm::success;
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_pci_id_get(std::uint32_t index, std::uint64_t* bdf) {
  return with_device(index, [&](fake::State&, fake::FakeDevice& device) {
    if (bdf == nullptr) return rocm::status_invalid_args;
    *bdf = device.pci_id;
    return rocm::success;
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_gpu_clk_freq_get(std::uint32_t index, rocm::ClockType type,
                                                        rocm::Frequencies* frequencies) {
  return with_device(index, [&](fake::State&, fake::FakeDevice& device) {
    if (frequencies == nullptr || (type != rocm::clock_system && type != rocm::clock_memory)) {
      return rocm::status_invalid_args;
    }
    const std::vector<int> levels =
        type == rocm::clock_system ? device.sclk_levels_mhz() : device.mclk_levels_mhz();
    const dvfslab::Telemetry now = device.gpu->read_telemetry();
    const int running = (type == rocm::clock_system ? now.sm_mhz : now.mem_mhz).value_or(levels.front());
    *frequencies = rocm::Frequencies{};
    frequencies->num_supported = static_cast<std::uint32_t>(levels.size());
    for (std::size_t i = 0; i < levels.size(); ++i) {
      frequencies->frequency[i] = static_cast<std::uint64_t>(levels[i]) * hz_per_mhz;
      // The current level: the highest at or below the clock the GPU runs at.
      if (levels[i] <= running) frequencies->current = static_cast<std::uint32_t>(i);
    }
    return rocm::success;
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_gpu_clk_freq_set(std::uint32_t index, rocm::ClockType type,
                                                        std::uint64_t mask) {
  return with_device(index, [&](fake::State& state, fake::FakeDevice& device) {
    if (refused(state, fmt::format("rsmi_dev_gpu_clk_freq_set device={} clock={} mask={:#x}", index,
                                   clock_name(type), mask))) {
      return rocm::status_permission;
    }
    if (type != rocm::clock_system && type != rocm::clock_memory) return rocm::status_invalid_args;
    const std::size_t count =
        type == rocm::clock_system ? device.sclk_levels_mhz().size() : device.mclk_levels_mhz().size();
    const std::uint64_t relevant = mask & ((std::uint64_t{1} << count) - 1);
    if (relevant == 0) return rocm::status_invalid_args;
    // As the driver does: enabling levels switches to the manual performance level.
    device.perf_level = rocm::perf_level_manual;
    (type == rocm::clock_system ? device.sclk_mask : device.mclk_mask) = relevant;
    fake::apply_and_save(device);
    return rocm::success;
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_perf_level_get(std::uint32_t index, rocm::PerfLevel* level) {
  return with_device(index, [&](fake::State&, fake::FakeDevice& device) {
    if (level == nullptr) return rocm::status_invalid_args;
    *level = device.perf_level;
    return rocm::success;
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_perf_level_set_v1(std::uint32_t index, rocm::PerfLevel level) {
  return with_device(index, [&](fake::State& state, fake::FakeDevice& device) {
    if (refused(state, fmt::format("rsmi_dev_perf_level_set_v1 device={} level={}", index, level))) {
      return rocm::status_permission;
    }
    if (level > rocm::perf_level_determinism) return rocm::status_invalid_args;
    device.perf_level = level;
    // Leaving the manual level gives the firmware every level again.
    if (level != rocm::perf_level_manual) {
      device.sclk_mask = (std::uint64_t{1} << device.sclk_levels_mhz().size()) - 1;
      device.mclk_mask = (std::uint64_t{1} << device.mclk_levels_mhz().size()) - 1;
    }
    fake::apply_and_save(device);
    return rocm::success;
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_power_cap_get(std::uint32_t index, std::uint32_t sensor,
                                                     std::uint64_t* cap) {
  return with_device(index, [&](fake::State&, fake::FakeDevice& device) {
    if (cap == nullptr || sensor != 0) return rocm::status_invalid_args;
    *cap = static_cast<std::uint64_t>(std::llround(device.power_cap_w * microwatts_per_watt));
    return rocm::success;
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_power_cap_default_get(std::uint32_t index, std::uint64_t* cap) {
  return with_device(index, [&](fake::State&, fake::FakeDevice& device) {
    if (cap == nullptr) return rocm::status_invalid_args;
    *cap = static_cast<std::uint64_t>(
        std::llround(device.gpu->spec().power_limit_default_w * microwatts_per_watt));
    return rocm::success;
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_power_cap_range_get(std::uint32_t index, std::uint32_t sensor,
                                                           std::uint64_t* max, std::uint64_t* min) {
  return with_device(index, [&](fake::State&, fake::FakeDevice& device) {
    if (max == nullptr || min == nullptr || sensor != 0) return rocm::status_invalid_args;
    *max =
        static_cast<std::uint64_t>(std::llround(device.gpu->spec().power_limit_max_w * microwatts_per_watt));
    *min =
        static_cast<std::uint64_t>(std::llround(device.gpu->spec().power_limit_min_w * microwatts_per_watt));
    return rocm::success;
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_power_cap_set(std::uint32_t index, std::uint32_t sensor,
                                                     std::uint64_t cap) {
  return with_device(index, [&](fake::State& state, fake::FakeDevice& device) {
    if (refused(state,
                fmt::format("rsmi_dev_power_cap_set device={} sensor={} cap_uw={}", index, sensor, cap))) {
      return rocm::status_permission;
    }
    const double watts = static_cast<double>(cap) / microwatts_per_watt;
    if (sensor != 0 || watts < device.gpu->spec().power_limit_min_w ||
        watts > device.gpu->spec().power_limit_max_w) {
      return rocm::status_invalid_args;
    }
    device.power_cap_w = watts;
    fake::apply_and_save(device);
    return rocm::success;
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_power_ave_get(std::uint32_t index, std::uint32_t sensor,
                                                     std::uint64_t* power) {
  return with_device(index, [&](fake::State&, fake::FakeDevice& device) {
    if (power == nullptr || sensor != 0) return rocm::status_invalid_args;
    const auto watts = device.gpu->read_telemetry().power_average_w;
    if (!watts) return rocm::status_not_supported;
    *power = static_cast<std::uint64_t>(std::llround(*watts * microwatts_per_watt));
    return rocm::success;
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_energy_count_get(std::uint32_t index, std::uint64_t* counter,
                                                        float* resolution, std::uint64_t* timestamp) {
  return with_device(index, [&](fake::State&, fake::FakeDevice& device) {
    if (counter == nullptr || resolution == nullptr || timestamp == nullptr) return rocm::status_invalid_args;
    const dvfslab::Telemetry now = device.gpu->read_telemetry();
    if (!now.energy_j) return rocm::status_not_supported;
    *counter = static_cast<std::uint64_t>(*now.energy_j * 1e6 / static_cast<double>(energy_resolution_uj));
    *resolution = energy_resolution_uj;
    *timestamp = static_cast<std::uint64_t>(now.time_s * 1e9);
    return rocm::success;
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_temp_metric_get(std::uint32_t index, rocm::TemperatureType sensor,
                                                       rocm::TemperatureMetric metric,
                                                       std::int64_t* temperature) {
  return with_device(index, [&](fake::State&, fake::FakeDevice& device) {
    if (temperature == nullptr || metric != rocm::temperature_current) return rocm::status_invalid_args;
    const dvfslab::Telemetry now = device.gpu->read_telemetry();
    // Like an MI300X, the fake has a junction and a memory sensor and no edge sensor.
    const std::optional<double> celsius = sensor == rocm::temperature_junction ? now.gpu_temperature_c
                                          : sensor == rocm::temperature_memory ? now.memory_temperature_c
                                                                               : std::nullopt;
    if (!celsius) return rocm::status_not_supported;
    *temperature = std::llround(*celsius * 1000.0);
    return rocm::success;
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_busy_percent_get(std::uint32_t index, std::uint32_t* percent) {
  return with_device(index, [&](fake::State&, fake::FakeDevice& device) {
    if (percent == nullptr) return rocm::status_invalid_args;
    const auto busy = device.gpu->read_telemetry().gpu_utilization_pct;
    if (!busy) return rocm::status_not_supported;
    *percent = static_cast<std::uint32_t>(*busy);
    return rocm::success;
  });
}

FAKE_ROCM_EXPORT rocm::Status rsmi_dev_memory_busy_percent_get(std::uint32_t index, std::uint32_t* percent) {
  return with_device(index, [&](fake::State&, fake::FakeDevice& device) {
    if (percent == nullptr) return rocm::status_invalid_args;
    const auto busy = device.gpu->read_telemetry().memory_utilization_pct;
    if (!busy) return rocm::status_not_supported;
    *percent = static_cast<std::uint32_t>(*busy);
    return rocm::success;
  });
}
