// The NVML entry points the fake exports, under NVML's own names and C linkage;
// the workload-power-profile ones are in fake_profile_exports.cpp. Built twice:
// libnvidia-ml.so.1 of a current driver, and (with DVFSLAB_FAKE_NVML_OLD_DRIVER)
// one of an older driver that lacks the newer symbols, which is how tests meet a
// missing entry point.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "export_checks.hpp"
#include "fake_calls.hpp"
#include "fake_state.hpp"
#include "gpu/nvml/nvml_throttle.hpp"

using dvfslab::fake_nvml::FakeDevice;
using dvfslab::fake_nvml::state;
using dvfslab::fake_nvml::state_mutex;
using dvfslab::fake_nvml::with_device;
using dvfslab::fake_nvml::with_state;
namespace nvml = dvfslab::nvml;
namespace fake = dvfslab::fake_nvml;

namespace {

nvml::Return copy_string(const std::string& text, char* buffer, unsigned length) {
  if (buffer == nullptr) return nvml::error_invalid_argument;
  if (text.size() + 1 > length) return nvml::error_insufficient_size;
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return nvml::success;
}

nvml::Return copy_clocks(const std::vector<int>& clocks, unsigned* count, unsigned* buffer) {
  if (count == nullptr) return nvml::error_invalid_argument;
  const unsigned capacity = *count;
  *count = static_cast<unsigned>(clocks.size());
  if (capacity < clocks.size() || buffer == nullptr) return nvml::error_insufficient_size;
  std::copy(clocks.begin(), clocks.end(), buffer);
  return nvml::success;
}

// A setter: logged first (the log proves what reached the "driver"), then refused
// or applied to the simulated GPU.
template <class Apply>
nvml::Return setter(nvml::Device handle, std::string_view function, const std::string& arguments,
                    Apply&& apply) {
  return with_device(handle, [&](FakeDevice& device) {
    fake::log_setter_call(
        fmt::format("{} device={}{}{}", function, device.index, arguments.empty() ? "" : " ", arguments));
    if (fake::refuses_setters(state()->faults, device.index)) return nvml::error_no_permission;
    apply(*device.gpu);
    fake::save_control_state();
    return nvml::success;
  });
}

template <class T, class Value>
nvml::Return store(T* out, const std::optional<Value>& value) {
  if (out == nullptr) return nvml::error_invalid_argument;
  if (!value) return nvml::error_not_supported;
  *out = static_cast<T>(*value);
  return nvml::success;
}

nvml::Return fake_init() {
  std::lock_guard lock(state_mutex());
  try {
    return fake::initialise();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake NVML: %s\n", e.what());
    return nvml::error_unknown;
  }
}

nvml::Return fake_device_count(unsigned* count) {
  return with_state(
      [&](fake::State& s) { return store(count, std::optional<std::size_t>(s.devices.size())); });
}

nvml::Return fake_handle_by_index(unsigned index, nvml::Device* device) {
  return with_state([&](fake::State& s) {
    if (device == nullptr || index >= s.devices.size()) return nvml::error_invalid_argument;
    *device = fake::handle_of(s.devices[index]);
    return nvml::success;
  });
}

nvml::Return fake_pci_info(nvml::Device handle, nvml::PciInfo* pci) {
  return with_device(handle, [&](FakeDevice& device) {
    if (pci == nullptr) return nvml::error_invalid_argument;
    *pci = nvml::PciInfo{};
    std::snprintf(pci->bus_id, sizeof pci->bus_id, "%s", device.pci_bus_id.c_str());
    std::snprintf(pci->bus_id_legacy, sizeof pci->bus_id_legacy, "%s", device.pci_bus_id.substr(4).c_str());
    pci->bus = static_cast<unsigned>(0x18 + 0x10 * device.index);
    return nvml::success;
  });
}

nvml::Return fake_clock_reasons(nvml::Device handle, unsigned long long* reasons) {
  return with_device(handle, [&](FakeDevice& device) {
    const auto neutral = device.gpu->read_telemetry().throttle_reasons;
    return store(reasons, neutral ? std::optional(nvml::nvml_clock_event_reasons(*neutral)) : std::nullopt);
  });
}

#ifndef DVFSLAB_FAKE_NVML_OLD_DRIVER
// As NVML: INSUFFICIENT_SIZE with the count needed when the buffer is too small.
nvml::Return fake_compute_processes(nvml::Device handle, unsigned* count, nvml::ProcessInfo* processes) {
  return with_device(handle, [&](FakeDevice& device) {
    if (count == nullptr) return nvml::error_invalid_argument;
    const std::vector<unsigned> pids = compute_pids_now(*state(), device);
    const unsigned capacity = *count;
    *count = static_cast<unsigned>(pids.size());
    if (capacity < pids.size() || (capacity > 0 && processes == nullptr)) {
      return nvml::error_insufficient_size;
    }
    for (std::size_t i = 0; i < pids.size(); ++i) {
      // 0xffffffff: in no GPU or compute instance (the GPU is not split).
      processes[i] = nvml::ProcessInfo{pids[i], 0, 0xffffffff, 0xffffffff};
    }
    return nvml::success;
  });
}
#endif

const char* error_text(nvml::Return code) {
  switch (code) {
    case nvml::success: return "Success";
    case nvml::error_uninitialized: return "Uninitialized";
    case nvml::error_invalid_argument: return "Invalid Argument";
    case nvml::error_not_supported: return "Not Supported";
    case nvml::error_no_permission: return "Insufficient Permissions";
    case nvml::error_not_found: return "Not Found";
    case nvml::error_insufficient_size: return "Insufficient Size";
    case nvml::error_driver_not_loaded: return "Driver Not Loaded";
    case nvml::error_gpu_is_lost: return "GPU is lost";
    case nvml::error_argument_version_mismatch: return "Argument Version Mismatch";
    default: return "Unknown Error";
  }
}

}  // namespace

FAKE_NVML_EXPORT nvml::Return nvmlInit_v2() { return fake_init(); }
FAKE_NVML_EXPORT nvml::Return nvmlInit() { return fake_init(); }
FAKE_NVML_EXPORT nvml::Return nvmlShutdown() {
  std::lock_guard lock(state_mutex());
  return fake::shut_down();
}
FAKE_NVML_EXPORT const char* nvmlErrorString(nvml::Return code) { return error_text(code); }

FAKE_NVML_EXPORT nvml::Return nvmlSystemGetDriverVersion(char* version, unsigned length) {
  return with_state([&](fake::State&) { return copy_string("000.00-fake", version, length); });
}
FAKE_NVML_EXPORT nvml::Return nvmlSystemGetNVMLVersion(char* version, unsigned length) {
  return with_state([&](fake::State&) { return copy_string("00.000.00-fake", version, length); });
}

FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetCount_v2(unsigned* count) { return fake_device_count(count); }
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetCount(unsigned* count) { return fake_device_count(count); }
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetHandleByIndex_v2(unsigned index, nvml::Device* device) {
  return fake_handle_by_index(index, device);
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetHandleByIndex(unsigned index, nvml::Device* device) {
  return fake_handle_by_index(index, device);
}

FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetName(nvml::Device handle, char* name, unsigned length) {
  return with_device(handle,
                     [&](FakeDevice& device) { return copy_string(device.gpu->spec().name, name, length); });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetUUID(nvml::Device handle, char* uuid, unsigned length) {
  return with_device(handle, [&](FakeDevice& device) { return copy_string(device.uuid, uuid, length); });
}
#ifndef DVFSLAB_FAKE_NVML_OLD_DRIVER
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetPciInfo_v3(nvml::Device handle, nvml::PciInfo* pci) {
  return fake_pci_info(handle, pci);
}
#endif
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetPciInfo_v2(nvml::Device handle, nvml::PciInfo* pci) {
  return fake_pci_info(handle, pci);
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetArchitecture(nvml::Device handle, unsigned* architecture) {
  return with_device(handle, [&](FakeDevice& device) {
    return store(architecture, std::optional<unsigned>(device.architecture));
  });
}

FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetSupportedMemoryClocks(nvml::Device handle, unsigned* count,
                                                                 unsigned* clocks) {
  return with_device(handle, [&](FakeDevice& device) {
    return copy_clocks(device.gpu->clock_table().memory_mhz, count, clocks);
  });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetSupportedGraphicsClocks(nvml::Device handle, unsigned memory_mhz,
                                                                   unsigned* count, unsigned* clocks) {
  return with_device(handle, [&](FakeDevice& device) {
    const auto table = device.gpu->clock_table();
    const auto found = table.graphics_mhz.find(static_cast<int>(memory_mhz));
    if (found == table.graphics_mhz.end()) return nvml::error_not_found;
    return copy_clocks(found->second, count, clocks);
  });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetDefaultApplicationsClock(nvml::Device handle, int type,
                                                                    unsigned* mhz) {
  return with_device(handle, [&](FakeDevice& device) {
    const auto table = device.gpu->clock_table();
    if (type == nvml::clock_mem) return store(mhz, table.default_memory_mhz);
    if (type == nvml::clock_graphics || type == nvml::clock_sm) return store(mhz, table.default_graphics_mhz);
    return nvml::error_invalid_argument;
  });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetApplicationsClock(nvml::Device handle, int type, unsigned* mhz) {
  return with_device(handle, [&](FakeDevice& device) {
    const auto control = device.gpu->control_state();
    const auto table = device.gpu->clock_table();
    if (type == nvml::clock_mem) {
      return store(
          mhz, control.application_memory_mhz ? control.application_memory_mhz : table.default_memory_mhz);
    }
    if (type == nvml::clock_graphics || type == nvml::clock_sm) {
      return store(mhz, control.application_graphics_mhz ? control.application_graphics_mhz
                                                         : table.default_graphics_mhz);
    }
    return nvml::error_invalid_argument;
  });
}

FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetPowerManagementDefaultLimit(nvml::Device handle,
                                                                       unsigned* milliwatts) {
  return with_device(handle, [&](FakeDevice& device) {
    const auto limit = device.gpu->power_limits().default_w;
    return store(milliwatts, limit ? std::optional<double>(*limit * 1000.0) : std::nullopt);
  });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetPowerManagementLimitConstraints(nvml::Device handle,
                                                                           unsigned* min_mw,
                                                                           unsigned* max_mw) {
  return with_device(handle, [&](FakeDevice& device) {
    const auto limits = device.gpu->power_limits();
    if (!limits.min_w || !limits.max_w) return nvml::error_not_supported;
    if (const auto code = store(min_mw, std::optional<double>(*limits.min_w * 1000.0)); code != nvml::success)
      return code;
    return store(max_mw, std::optional<double>(*limits.max_w * 1000.0));
  });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetPowerManagementLimit(nvml::Device handle, unsigned* milliwatts) {
  return with_device(handle, [&](FakeDevice& device) {
    const auto limit = device.gpu->power_limits().current_w;
    return store(milliwatts, limit ? std::optional<double>(*limit * 1000.0) : std::nullopt);
  });
}

FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetPowerUsage(nvml::Device handle, unsigned* milliwatts) {
  return with_device(handle, [&](FakeDevice& device) {
    const auto power = device.gpu->read_telemetry().power_average_w;
    return store(milliwatts, power ? std::optional<double>(*power * 1000.0) : std::nullopt);
  });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetTotalEnergyConsumption(nvml::Device handle,
                                                                  unsigned long long* millijoules) {
  return with_device(handle, [&](FakeDevice& device) {
    if (state()->faults.energy_not_supported) return nvml::error_not_supported;
    const auto telemetry = device.gpu->read_telemetry();
    const nvml::Return code = store(
        millijoules, telemetry.energy_j ? std::optional<double>(*telemetry.energy_j * 1000.0) : std::nullopt);
    if (code == nvml::success) fake::log_energy_reading(device, *millijoules, telemetry.time_s);
    return code;
  });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetFieldValues(nvml::Device handle, int count,
                                                       nvml::FieldValue* values) {
  return with_device(handle, [&](FakeDevice& device) {
    if (count < 0 || (count > 0 && values == nullptr)) return nvml::error_invalid_argument;
    const auto telemetry = device.gpu->read_telemetry();
    const auto now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    for (nvml::FieldValue& field : std::span(values, static_cast<std::size_t>(count))) {
      field.timestamp = now_us;
      field.value_type = nvml::value_type_unsigned_int;
      std::optional<double> value;
      if (field.field_id == nvml::field_power_instant && telemetry.power_instant_w) {
        value = *telemetry.power_instant_w * 1000.0;
      } else if (field.field_id == nvml::field_memory_temperature) {
        value = telemetry.memory_temperature_c;
      }
      field.nvml_return = value ? nvml::success : nvml::error_not_supported;
      if (value) field.value.ui_val = static_cast<unsigned>(*value + 0.5);
    }
    return nvml::success;
  });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetClockInfo(nvml::Device handle, int type, unsigned* mhz) {
  return with_device(handle, [&](FakeDevice& device) {
    const auto telemetry = device.gpu->read_telemetry();
    if (type == nvml::clock_mem) return store(mhz, telemetry.mem_mhz);
    if (type == nvml::clock_graphics || type == nvml::clock_sm) {
      const std::optional<unsigned> floor = state()->faults.sm_clock_floor_mhz;
      if (floor && telemetry.sm_mhz)
        return store(mhz, std::optional(std::max(*telemetry.sm_mhz, static_cast<int>(*floor))));
      return store(mhz, telemetry.sm_mhz);
    }
    return nvml::error_invalid_argument;
  });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetTemperature(nvml::Device handle, int sensor, unsigned* celsius) {
  return with_device(handle, [&](FakeDevice& device) {
    if (sensor != nvml::temperature_gpu) return nvml::error_invalid_argument;
    const auto temperature = device.gpu->read_telemetry().gpu_temperature_c;
    return store(celsius, temperature ? std::optional<double>(*temperature + 0.5) : std::nullopt);
  });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetUtilizationRates(nvml::Device handle,
                                                            nvml::Utilization* utilization) {
  return with_device(handle, [&](FakeDevice& device) {
    const auto telemetry = device.gpu->read_telemetry();
    if (utilization == nullptr) return nvml::error_invalid_argument;
    if (!telemetry.gpu_utilization_pct || !telemetry.memory_utilization_pct) return nvml::error_not_supported;
    utilization->gpu = static_cast<unsigned>(*telemetry.gpu_utilization_pct);
    utilization->memory = static_cast<unsigned>(*telemetry.memory_utilization_pct);
    return nvml::success;
  });
}
#ifndef DVFSLAB_FAKE_NVML_OLD_DRIVER
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetCurrentClocksEventReasons(nvml::Device handle,
                                                                     unsigned long long* reasons) {
  return fake_clock_reasons(handle, reasons);
}
#endif
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetCurrentClocksThrottleReasons(nvml::Device handle,
                                                                        unsigned long long* reasons) {
  return fake_clock_reasons(handle, reasons);
}

FAKE_NVML_EXPORT nvml::Return nvmlDeviceSetGpuLockedClocks(nvml::Device handle, unsigned min_mhz,
                                                           unsigned max_mhz) {
  return setter(handle, "nvmlDeviceSetGpuLockedClocks",
                fmt::format("min_mhz={} max_mhz={}", min_mhz, max_mhz), [&](dvfslab::SimGpu& gpu) {
                  gpu.lock_sm_clocks(static_cast<int>(min_mhz), static_cast<int>(max_mhz));
                });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceResetGpuLockedClocks(nvml::Device handle) {
  return setter(handle, "nvmlDeviceResetGpuLockedClocks", "",
                [](dvfslab::SimGpu& gpu) { gpu.reset_sm_clocks(); });
}
#ifndef DVFSLAB_FAKE_NVML_OLD_DRIVER
FAKE_NVML_EXPORT nvml::Return nvmlDeviceSetMemoryLockedClocks(nvml::Device handle, unsigned min_mhz,
                                                              unsigned max_mhz) {
  return setter(handle, "nvmlDeviceSetMemoryLockedClocks",
                fmt::format("min_mhz={} max_mhz={}", min_mhz, max_mhz), [&](dvfslab::SimGpu& gpu) {
                  gpu.lock_memory_clocks(static_cast<int>(min_mhz), static_cast<int>(max_mhz));
                });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceResetMemoryLockedClocks(nvml::Device handle) {
  return setter(handle, "nvmlDeviceResetMemoryLockedClocks", "",
                [](dvfslab::SimGpu& gpu) { gpu.reset_memory_clocks(); });
}
#endif
FAKE_NVML_EXPORT nvml::Return nvmlDeviceSetApplicationsClocks(nvml::Device handle, unsigned memory_mhz,
                                                              unsigned graphics_mhz) {
  return setter(handle, "nvmlDeviceSetApplicationsClocks",
                fmt::format("memory_mhz={} graphics_mhz={}", memory_mhz, graphics_mhz),
                [&](dvfslab::SimGpu& gpu) {
                  gpu.set_application_clocks(static_cast<int>(memory_mhz), static_cast<int>(graphics_mhz));
                });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceResetApplicationsClocks(nvml::Device handle) {
  return setter(handle, "nvmlDeviceResetApplicationsClocks", "",
                [](dvfslab::SimGpu& gpu) { gpu.reset_application_clocks(); });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceSetPowerManagementLimit(nvml::Device handle, unsigned milliwatts) {
  return setter(handle, "nvmlDeviceSetPowerManagementLimit", fmt::format("limit_mw={}", milliwatts),
                [&](dvfslab::SimGpu& gpu) { gpu.set_power_limit(milliwatts / 1000.0); });
}
#ifndef DVFSLAB_FAKE_NVML_OLD_DRIVER
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetMigMode(nvml::Device handle, unsigned* current_mode,
                                                   unsigned* pending_mode) {
  return with_device(handle, [&](FakeDevice& device) {
    if (current_mode == nullptr || pending_mode == nullptr) return nvml::error_invalid_argument;
    *current_mode = *pending_mode = device.mig_enabled ? nvml::device_mig_enable : 0;
    return nvml::success;
  });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetComputeRunningProcesses_v3(nvml::Device handle, unsigned* count,
                                                                      nvml::ProcessInfo* processes) {
  return fake_compute_processes(handle, count, processes);
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceGetComputeRunningProcesses_v2(nvml::Device handle, unsigned* count,
                                                                      nvml::ProcessInfo* processes) {
  return fake_compute_processes(handle, count, processes);
}
#endif

// Every export matches its entry of the list (export_checks.hpp); the current
// driver's fake exports every name of the list.
FAKE_NVML_CHECK_EXPORT(init, nvmlInit_v2);
FAKE_NVML_CHECK_EXPORT(init, nvmlInit);
FAKE_NVML_CHECK_EXPORT(shutdown, nvmlShutdown);
FAKE_NVML_CHECK_EXPORT(error_string, nvmlErrorString);
FAKE_NVML_CHECK_EXPORT(system_get_driver_version, nvmlSystemGetDriverVersion);
FAKE_NVML_CHECK_EXPORT(system_get_nvml_version, nvmlSystemGetNVMLVersion);
FAKE_NVML_CHECK_EXPORT(device_get_count, nvmlDeviceGetCount_v2);
FAKE_NVML_CHECK_EXPORT(device_get_count, nvmlDeviceGetCount);
FAKE_NVML_CHECK_EXPORT(device_get_handle_by_index, nvmlDeviceGetHandleByIndex_v2);
FAKE_NVML_CHECK_EXPORT(device_get_handle_by_index, nvmlDeviceGetHandleByIndex);
FAKE_NVML_CHECK_EXPORT(device_get_name, nvmlDeviceGetName);
FAKE_NVML_CHECK_EXPORT(device_get_uuid, nvmlDeviceGetUUID);
#ifndef DVFSLAB_FAKE_NVML_OLD_DRIVER
FAKE_NVML_CHECK_EXPORT(device_get_pci_info, nvmlDeviceGetPciInfo_v3);
#endif
FAKE_NVML_CHECK_EXPORT(device_get_pci_info, nvmlDeviceGetPciInfo_v2);
FAKE_NVML_CHECK_EXPORT(device_get_architecture, nvmlDeviceGetArchitecture);
FAKE_NVML_CHECK_EXPORT(device_get_supported_memory_clocks, nvmlDeviceGetSupportedMemoryClocks);
FAKE_NVML_CHECK_EXPORT(device_get_supported_graphics_clocks, nvmlDeviceGetSupportedGraphicsClocks);
FAKE_NVML_CHECK_EXPORT(device_get_default_applications_clock, nvmlDeviceGetDefaultApplicationsClock);
FAKE_NVML_CHECK_EXPORT(device_get_applications_clock, nvmlDeviceGetApplicationsClock);
FAKE_NVML_CHECK_EXPORT(device_get_power_management_default_limit, nvmlDeviceGetPowerManagementDefaultLimit);
FAKE_NVML_CHECK_EXPORT(device_get_power_management_limit_constraints,
                       nvmlDeviceGetPowerManagementLimitConstraints);
FAKE_NVML_CHECK_EXPORT(device_get_power_management_limit, nvmlDeviceGetPowerManagementLimit);
FAKE_NVML_CHECK_EXPORT(device_get_power_usage, nvmlDeviceGetPowerUsage);
FAKE_NVML_CHECK_EXPORT(device_get_total_energy_consumption, nvmlDeviceGetTotalEnergyConsumption);
FAKE_NVML_CHECK_EXPORT(device_get_field_values, nvmlDeviceGetFieldValues);
FAKE_NVML_CHECK_EXPORT(device_get_clock_info, nvmlDeviceGetClockInfo);
FAKE_NVML_CHECK_EXPORT(device_get_temperature, nvmlDeviceGetTemperature);
FAKE_NVML_CHECK_EXPORT(device_get_utilization_rates, nvmlDeviceGetUtilizationRates);
#ifndef DVFSLAB_FAKE_NVML_OLD_DRIVER
FAKE_NVML_CHECK_EXPORT(device_get_current_clocks_event_reasons, nvmlDeviceGetCurrentClocksEventReasons);
#endif
FAKE_NVML_CHECK_EXPORT(device_get_current_clocks_event_reasons, nvmlDeviceGetCurrentClocksThrottleReasons);
FAKE_NVML_CHECK_EXPORT(device_set_gpu_locked_clocks, nvmlDeviceSetGpuLockedClocks);
FAKE_NVML_CHECK_EXPORT(device_reset_gpu_locked_clocks, nvmlDeviceResetGpuLockedClocks);
#ifndef DVFSLAB_FAKE_NVML_OLD_DRIVER
FAKE_NVML_CHECK_EXPORT(device_set_memory_locked_clocks, nvmlDeviceSetMemoryLockedClocks);
FAKE_NVML_CHECK_EXPORT(device_reset_memory_locked_clocks, nvmlDeviceResetMemoryLockedClocks);
#endif
FAKE_NVML_CHECK_EXPORT(device_set_applications_clocks, nvmlDeviceSetApplicationsClocks);
FAKE_NVML_CHECK_EXPORT(device_reset_applications_clocks, nvmlDeviceResetApplicationsClocks);
FAKE_NVML_CHECK_EXPORT(device_set_power_management_limit, nvmlDeviceSetPowerManagementLimit);
#ifndef DVFSLAB_FAKE_NVML_OLD_DRIVER
FAKE_NVML_CHECK_EXPORT(device_get_mig_mode, nvmlDeviceGetMigMode);
FAKE_NVML_CHECK_EXPORT(device_get_compute_running_processes, nvmlDeviceGetComputeRunningProcesses_v3);
FAKE_NVML_CHECK_EXPORT(device_get_compute_running_processes, nvmlDeviceGetComputeRunningProcesses_v2);
// 44 = the 40 checks above and the 4 of fake_profile_exports.cpp: a name added to
// the list needs an export and a check.
static_assert(dvfslab::fake_nvml::checks::symbol_count == 44,
              "nvml_api.hpp lists a symbol name the fake does not export and check here");
#endif
