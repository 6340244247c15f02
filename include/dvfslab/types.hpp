#pragma once
// The vocabulary types every module shares (names fixed by docs/architecture.md#key-types).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dvfslab {

// One DVFS setting; an absent knob is left as the GPU has it.
struct Setting {
  std::optional<int> sm_mhz;
  std::optional<int> mem_mhz;
  std::optional<int> power_limit_w;
  // A workload power profile requested alone (its vendor id, e.g. NVML's
  // nvmlPowerProfileType_t); absent = the requested profiles as found.
  std::optional<int> workload_profile;

  bool is_default() const { return !sm_mhz && !mem_mhz && !power_limit_w && !workload_profile; }
  bool operator==(const Setting&) const = default;
  auto operator<=>(const Setting&) const = default;
};
// "sm=1380 mem=877 pl=default", with " profile=max-q" when a profile is requested.
std::string to_string(const Setting& setting);
// Ranks settings for the baseline when no default is marked: higher SM clock
// first, then higher memory clock, then higher power limit; an absent knob (left
// at the GPU's default, the top for data-centre GPUs) ranks above any value; a
// setting without a workload profile comes before the same clocks with one.
// Returns true when `a` comes before `b`. Analysis and replay both rank by it.
bool setting_order_before(const Setting& a, const Setting& b);

enum class Mode { train, infer };
enum class Precision { fp32, tf32, bf16, fp16 };

std::string_view to_string(Mode mode);
std::string_view to_string(Precision precision);
Mode parse_mode(std::string_view text);            // throws ConfigError listing the choices
Precision parse_precision(std::string_view text);  // throws ConfigError listing the choices

struct Case {
  std::string workload;
  int batch = 1;
  Mode mode = Mode::train;
  Precision precision = Precision::fp32;

  bool operator==(const Case&) const = default;
  auto operator<=>(const Case&) const = default;
};
std::string to_string(const Case& c);  // "resnet50 train bf16 b128"

struct Point {
  Case workload_case;
  Setting setting;
  int repetition = 0;

  bool operator==(const Point&) const = default;
  auto operator<=>(const Point&) const = default;
};

// Why a GPU runs below the clock it was asked for: dvfslab's own, vendor-neutral
// reason bits. Each backend maps its vendor's reasons onto them (the NVML backend
// in src/gpu/nvml/nvml_throttle.cpp). The bit positions are fixed: databases store
// the mask (they match NVML's, so databases written before the mapping read the same).
namespace throttle {
inline constexpr std::uint64_t gpu_idle = 0x1;
inline constexpr std::uint64_t applications_clocks_setting = 0x2;
inline constexpr std::uint64_t sw_power_cap = 0x4;
inline constexpr std::uint64_t hw_slowdown = 0x8;
inline constexpr std::uint64_t sync_boost = 0x10;
inline constexpr std::uint64_t sw_thermal_slowdown = 0x20;
inline constexpr std::uint64_t hw_thermal_slowdown = 0x40;
inline constexpr std::uint64_t hw_power_brake_slowdown = 0x80;
inline constexpr std::uint64_t display_clock_setting = 0x100;
inline constexpr std::uint64_t other = 0x200;  // a reason the backend reports that has no bit above
}  // namespace throttle

// Names of the set bits, e.g. {"sw_power_cap", "sw_thermal_slowdown"}; unknown bits
// appear as "unknown_0x...".
std::vector<std::string> throttle_reason_names(std::uint64_t mask);

// One reading of the GPU. Every field the device cannot report is absent, never a
// sentinel.
struct Telemetry {
  double time_s = 0.0;                    // on the Gpu's clock (wall or virtual)
  std::optional<double> power_instant_w;  // NVML_FI_DEV_POWER_INSTANT
  std::optional<double> power_average_w;  // nvmlDeviceGetPowerUsage (~1 s average)
  std::optional<double> energy_j;         // cumulative counter since driver load
  std::optional<int> sm_mhz;
  std::optional<int> mem_mhz;
  std::optional<double> gpu_temperature_c;
  std::optional<double> memory_temperature_c;
  std::optional<int> gpu_utilization_pct;
  std::optional<int> memory_utilization_pct;
  std::optional<std::uint64_t> throttle_reasons;  // bit mask of namespace throttle's reasons
};

// Validity of one measurement window.
struct MeasurementFlags {
  bool short_window = false;      // shorter than two sensor periods
  bool energy_estimated = false;  // counter did not move or is missing: from power
  bool clock_mismatch = false;    // effective clock differs from the requested one
  bool thermal_throttle = false;
  bool power_throttle = false;

  // The GPU ran at another clock than the one requested with no power or thermal
  // limit to explain it: the setting was not applied, so what was measured belongs to
  // some other setting (docs/measure.md).
  bool setting_not_applied() const { return clock_mismatch && !power_throttle && !thermal_throttle; }
  std::vector<std::string> names() const;
  // Adds `other`'s flags: a point is flagged when any of its windows was.
  MeasurementFlags& operator|=(const MeasurementFlags& other);
  bool operator==(const MeasurementFlags&) const = default;
};

struct GpuMeasurement;

struct Measurement {
  std::string name;
  double duration_s = 0.0;
  std::optional<double> energy_j;             // from the counter (or estimated, see flags)
  std::optional<double> energy_integrated_j;  // trapezoid over instant power
  // Bound on energy_j's error from the counter updating only every sensor period
  // (docs/measure.md); absent when energy_j is estimated from power.
  std::optional<double> energy_error_j;
  std::optional<double> mean_power_w;
  std::optional<double> peak_power_w;
  std::optional<double> sm_mhz_mean;
  std::optional<int> sm_mhz_min;
  std::optional<double> mem_mhz_mean;
  // The share of the window the GPU reported itself busy (utilization above 0), and
  // its mean clocks over that share: what a setting ran at under load, which an idle
  // stretch (a GPU of the job left without work, a pause for data) does not blur.
  // Absent where the GPU reported no utilization; the busy clocks also where it was
  // never busy. In `measure --json`, not stored: they decide the clock_mismatch flag,
  // which is.
  std::optional<double> busy_fraction;
  std::optional<double> sm_mhz_busy_mean;
  std::optional<double> mem_mhz_busy_mean;
  std::optional<double> temperature_c_min;
  std::optional<double> temperature_c_max;
  std::map<std::string, double> throttle_fraction;  // reason -> fraction of the window
  std::int64_t iterations = 0;
  double items = 0.0;
  std::size_t samples = 0;
  MeasurementFlags flags;
  // One entry per GPU when a meter read several (the fields above are then the
  // job's totals, docs/multi-gpu.md); empty for one GPU.
  std::vector<GpuMeasurement> gpus;
};

// One GPU's share of a window measured over several GPUs.
struct GpuMeasurement {
  std::string uuid;
  int index = 0;     // the GPU's index among its backend's GPUs
  std::string name;  // the GPU's name ("NVIDIA H200"); the window's is Measurement::name
  Measurement measurement;
};

}  // namespace dvfslab
