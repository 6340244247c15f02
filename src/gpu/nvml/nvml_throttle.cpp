#include "gpu/nvml/nvml_throttle.hpp"

#include <utility>

#include "dvfslab/types.hpp"

namespace dvfslab::nvml {
namespace {

// nvmlClocksEventReason* values (nvml.h) and the neutral reason each one is.
constexpr std::pair<unsigned long long, std::uint64_t> reason_map[] = {
    {0x1, throttle::gpu_idle},                     // GpuIdle
    {0x2, throttle::applications_clocks_setting},  // ApplicationsClocksSetting
    {0x4, throttle::sw_power_cap},                 // SwPowerCap
    {0x8, throttle::hw_slowdown},                  // HwSlowdown
    {0x10, throttle::sync_boost},                  // SyncBoost
    {0x20, throttle::sw_thermal_slowdown},         // SwThermalSlowdown
    {0x40, throttle::hw_thermal_slowdown},         // HwThermalSlowdown
    {0x80, throttle::hw_power_brake_slowdown},     // HwPowerBrakeSlowdown
    {0x100, throttle::display_clock_setting},      // DisplayClockSetting
};

}  // namespace

std::uint64_t neutral_throttle_reasons(unsigned long long nvml_reasons) {
  std::uint64_t reasons = 0;
  unsigned long long mapped = 0;
  for (const auto& [nvml_bit, reason] : reason_map) {
    mapped |= nvml_bit;
    if (nvml_reasons & nvml_bit) reasons |= reason;
  }
  if (nvml_reasons & ~mapped) reasons |= throttle::other;
  return reasons;
}

unsigned long long nvml_clock_event_reasons(std::uint64_t reasons) {
  unsigned long long nvml_reasons = 0;
  for (const auto& [nvml_bit, reason] : reason_map) {
    if (reasons & reason) nvml_reasons |= nvml_bit;
  }
  return nvml_reasons;
}

}  // namespace dvfslab::nvml
