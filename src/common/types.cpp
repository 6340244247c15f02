#include "dvfslab/types.hpp"

#include <fmt/format.h>

#include <climits>
#include <cstdint>
#include <tuple>

#include "dvfslab/error.hpp"
#include "dvfslab/workload_profile_names.hpp"

namespace dvfslab {
namespace {

std::string knob_text(const std::optional<int>& value) {
  return value ? std::to_string(*value) : std::string("default");
}

// An absent knob ranks above every value; negating makes ascending integer order
// the setting order (analysis's sort key in src/analysis/points.cpp agrees).
std::int64_t order_value(const std::optional<int>& knob) {
  return knob ? -static_cast<std::int64_t>(*knob) : -static_cast<std::int64_t>(INT_MAX) - 1;
}

}  // namespace

bool setting_order_before(const Setting& a, const Setting& b) {
  return std::tuple(order_value(a.sm_mhz), order_value(a.mem_mhz), order_value(a.power_limit_w),
                    a.workload_profile.has_value(), a.workload_profile.value_or(0)) <
         std::tuple(order_value(b.sm_mhz), order_value(b.mem_mhz), order_value(b.power_limit_w),
                    b.workload_profile.has_value(), b.workload_profile.value_or(0));
}

std::string to_string(const Setting& setting) {
  std::string text = fmt::format("sm={} mem={} pl={}", knob_text(setting.sm_mhz), knob_text(setting.mem_mhz),
                                 knob_text(setting.power_limit_w));
  if (setting.workload_profile) text += " profile=" + workload_power_profile_name(*setting.workload_profile);
  return text;
}

std::string_view to_string(Mode mode) { return mode == Mode::train ? "train" : "infer"; }

std::string_view to_string(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
  }
  return "fp32";
}

Mode parse_mode(std::string_view text) {
  if (text == "train") return Mode::train;
  if (text == "infer" || text == "inference") return Mode::infer;
  throw ConfigError(fmt::format("unknown mode '{}': choose train or infer", text));
}

Precision parse_precision(std::string_view text) {
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::bf16, Precision::fp16}) {
    if (text == to_string(p)) return p;
  }
  throw ConfigError(fmt::format("unknown precision '{}': choose fp32, tf32, bf16 or fp16", text));
}

std::string to_string(const Case& c) {
  return fmt::format("{} {} {} b{}", c.workload, to_string(c.mode), to_string(c.precision), c.batch);
}

std::vector<std::string> throttle_reason_names(std::uint64_t mask) {
  static constexpr std::pair<std::uint64_t, const char*> known[] = {
      {throttle::gpu_idle, "gpu_idle"},
      {throttle::applications_clocks_setting, "applications_clocks_setting"},
      {throttle::sw_power_cap, "sw_power_cap"},
      {throttle::hw_slowdown, "hw_slowdown"},
      {throttle::sync_boost, "sync_boost"},
      {throttle::sw_thermal_slowdown, "sw_thermal_slowdown"},
      {throttle::hw_thermal_slowdown, "hw_thermal_slowdown"},
      {throttle::hw_power_brake_slowdown, "hw_power_brake_slowdown"},
      {throttle::display_clock_setting, "display_clock_setting"},
      {throttle::other, "other"},
  };
  std::vector<std::string> names;
  std::uint64_t known_bits = 0;
  for (const auto& [bit, name] : known) {
    known_bits |= bit;
    if (mask & bit) names.emplace_back(name);
  }
  for (int bit = 0; bit < 64; ++bit) {
    const std::uint64_t value = std::uint64_t{1} << bit;
    if ((mask & value) && !(known_bits & value)) names.push_back(fmt::format("unknown_{:#x}", value));
  }
  return names;
}

MeasurementFlags& MeasurementFlags::operator|=(const MeasurementFlags& other) {
  short_window = short_window || other.short_window;
  energy_estimated = energy_estimated || other.energy_estimated;
  clock_mismatch = clock_mismatch || other.clock_mismatch;
  thermal_throttle = thermal_throttle || other.thermal_throttle;
  power_throttle = power_throttle || other.power_throttle;
  return *this;
}

std::vector<std::string> MeasurementFlags::names() const {
  std::vector<std::string> out;
  if (short_window) out.emplace_back("short_window");
  if (energy_estimated) out.emplace_back("energy_estimated");
  if (clock_mismatch) out.emplace_back("clock_mismatch");
  if (thermal_throttle) out.emplace_back("thermal_throttle");
  if (power_throttle) out.emplace_back("power_throttle");
  return out;
}

}  // namespace dvfslab
