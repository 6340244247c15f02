#pragma once
// The part of the ROCm SMI library (librocm_smi64.so) dvfslab uses, declared from
// AMD's public API (rocm_smi.h) so that dvfslab needs neither AMD's header nor the
// library to build. tests/unit/rocm_api_test.cpp checks these declarations
// against Debian's librocm-smi-dev header where it is installed.
#include <cstddef>
#include <cstdint>

namespace dvfslab::rocm {

using Status = std::uint32_t;  // rsmi_status_t
inline constexpr Status success = 0x0;
inline constexpr Status status_invalid_args = 0x1;
inline constexpr Status status_not_supported = 0x2;
inline constexpr Status status_file_error = 0x3;
inline constexpr Status status_permission = 0x4;
inline constexpr Status status_out_of_resources = 0x5;
inline constexpr Status status_internal_exception = 0x6;
inline constexpr Status status_input_out_of_bounds = 0x7;
inline constexpr Status status_init_error = 0x8;
inline constexpr Status status_not_yet_implemented = 0x9;
inline constexpr Status status_not_found = 0xA;
inline constexpr Status status_insufficient_size = 0xB;
inline constexpr Status status_busy = 0x10;
inline constexpr Status status_unknown_error = 0xFFFFFFFF;

using PerfLevel = std::uint32_t;  // rsmi_dev_perf_level_t
inline constexpr PerfLevel perf_level_auto = 0;
inline constexpr PerfLevel perf_level_low = 1;
inline constexpr PerfLevel perf_level_high = 2;
inline constexpr PerfLevel perf_level_manual = 3;
inline constexpr PerfLevel perf_level_stable_std = 4;
inline constexpr PerfLevel perf_level_stable_peak = 5;
inline constexpr PerfLevel perf_level_stable_min_mclk = 6;
inline constexpr PerfLevel perf_level_stable_min_sclk = 7;
inline constexpr PerfLevel perf_level_determinism = 8;
inline constexpr PerfLevel perf_level_unknown = 0x100;

using ClockType = std::uint32_t;                // rsmi_clk_type_t
inline constexpr ClockType clock_system = 0x0;  // SCLK, the graphics clock
inline constexpr ClockType clock_memory = 0x4;  // MCLK

using TemperatureType = std::uint32_t;  // rsmi_temperature_type_t
inline constexpr TemperatureType temperature_edge = 0;
inline constexpr TemperatureType temperature_junction = 1;
inline constexpr TemperatureType temperature_memory = 2;
using TemperatureMetric = std::uint32_t;  // rsmi_temperature_metric_t
inline constexpr TemperatureMetric temperature_current = 0;

using SoftwareComponent = std::uint32_t;  // rsmi_sw_component_t
inline constexpr SoftwareComponent component_driver = 0;

inline constexpr std::size_t max_frequencies = 32;  // RSMI_MAX_NUM_FREQUENCIES

// rsmi_frequencies_t: frequencies in Hz, lowest level first; bit i of a level mask
// is frequency[i].
struct Frequencies {
  std::uint32_t num_supported;
  std::uint32_t current;
  std::uint64_t frequency[max_frequencies];
};
static_assert(sizeof(Frequencies) == 264);

// rsmi_version_t
struct Version {
  std::uint32_t major;
  std::uint32_t minor;
  std::uint32_t patch;
  const char* build;
};

// One line per entry point: member, C signature, symbol names to try (newest first).
#define DVFSLAB_ROCM_ENTRY_POINTS(X)                                                                    \
  X(init, Status(std::uint64_t), "rsmi_init")                                                           \
  X(shut_down, Status(), "rsmi_shut_down")                                                              \
  X(status_string, Status(Status, const char**), "rsmi_status_string")                                  \
  X(version_get, Status(Version*), "rsmi_version_get")                                                  \
  X(version_str_get, Status(SoftwareComponent, char*, std::uint32_t), "rsmi_version_str_get")           \
  X(num_monitor_devices, Status(std::uint32_t*), "rsmi_num_monitor_devices")                            \
  X(dev_name_get, Status(std::uint32_t, char*, std::size_t), "rsmi_dev_name_get")                       \
  X(dev_unique_id_get, Status(std::uint32_t, std::uint64_t*), "rsmi_dev_unique_id_get")                 \
  X(dev_pci_id_get, Status(std::uint32_t, std::uint64_t*), "rsmi_dev_pci_id_get")                       \
  X(dev_gpu_clk_freq_get, Status(std::uint32_t, ClockType, Frequencies*), "rsmi_dev_gpu_clk_freq_get")  \
  X(dev_gpu_clk_freq_set, Status(std::uint32_t, ClockType, std::uint64_t), "rsmi_dev_gpu_clk_freq_set") \
  X(dev_perf_level_get, Status(std::uint32_t, PerfLevel*), "rsmi_dev_perf_level_get")                   \
  X(dev_perf_level_set, Status(std::uint32_t, PerfLevel), "rsmi_dev_perf_level_set_v1",                 \
    "rsmi_dev_perf_level_set")                                                                          \
  X(dev_power_cap_get, Status(std::uint32_t, std::uint32_t, std::uint64_t*), "rsmi_dev_power_cap_get")  \
  X(dev_power_cap_default_get, Status(std::uint32_t, std::uint64_t*), "rsmi_dev_power_cap_default_get") \
  X(dev_power_cap_range_get, Status(std::uint32_t, std::uint32_t, std::uint64_t*, std::uint64_t*),      \
    "rsmi_dev_power_cap_range_get")                                                                     \
  X(dev_power_cap_set, Status(std::uint32_t, std::uint32_t, std::uint64_t), "rsmi_dev_power_cap_set")   \
  X(dev_power_ave_get, Status(std::uint32_t, std::uint32_t, std::uint64_t*), "rsmi_dev_power_ave_get")  \
  X(dev_energy_count_get, Status(std::uint32_t, std::uint64_t*, float*, std::uint64_t*),                \
    "rsmi_dev_energy_count_get")                                                                        \
  X(dev_temp_metric_get, Status(std::uint32_t, TemperatureType, TemperatureMetric, std::int64_t*),      \
    "rsmi_dev_temp_metric_get")                                                                         \
  X(dev_busy_percent_get, Status(std::uint32_t, std::uint32_t*), "rsmi_dev_busy_percent_get")           \
  X(dev_memory_busy_percent_get, Status(std::uint32_t, std::uint32_t*), "rsmi_dev_memory_busy_percent_get")

}  // namespace dvfslab::rocm
