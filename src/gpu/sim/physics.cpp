#include "gpu/sim/physics.hpp"

#include <algorithm>
#include <cmath>

namespace dvfslab::sim {

int highest_graphics_mhz(const SimGpuSpec& spec) {
  int highest = 0;
  for (const auto& clocks : spec.graphics_mhz) {
    if (!clocks.empty()) highest = std::max(highest, clocks.front());
  }
  return highest;
}

namespace {

// The SM-bound time's stretch beyond 1/fc at low clocks: latencies that the
// top clock hides stop being hidden. 1 at and above slow_clock_below_mhz.
double slow_clock_factor(const SimGpuSpec& spec, const SimKernel& kernel, int graphics_mhz) {
  if (spec.slow_clock_below_mhz <= 0 || graphics_mhz >= spec.slow_clock_below_mhz) return 1.0;
  const double gain = kernel.slow_clock_gain.value_or(spec.slow_clock_gain);
  return 1.0 + gain * std::pow(spec.slow_clock_below_mhz / graphics_mhz - 1.0, 1.5);
}

}  // namespace

double core_voltage_v(const SimGpuSpec& spec, int graphics_mhz) {
  return continued_voltage_v(spec, std::min(graphics_mhz, highest_graphics_mhz(spec)));
}

double kernel_seconds(const SimGpuSpec& spec, const SimKernel& kernel, int graphics_mhz, int memory_mhz) {
  const double core_scale = static_cast<double>(spec.boost_graphics_mhz()) / graphics_mhz *
                            slow_clock_factor(spec, kernel, graphics_mhz);
  const double memory_scale = static_cast<double>(spec.default_memory_mhz) / memory_mhz;
  return kernel.fixed_s + kernel.scalable_s * (kernel.compute_fraction * core_scale +
                                               (1.0 - kernel.compute_fraction) * memory_scale);
}

double memory_bound_share(const SimGpuSpec& spec, const SimKernel& kernel, int graphics_mhz, int memory_mhz) {
  const double total = kernel_seconds(spec, kernel, graphics_mhz, memory_mhz);
  if (total <= 0) return 0;
  const double memory_scale = static_cast<double>(spec.default_memory_mhz) / memory_mhz;
  return kernel.scalable_s * (1.0 - kernel.compute_fraction) * memory_scale / total;
}

double busy_power_w(const SimGpuSpec& spec, const SimKernel& kernel, int graphics_mhz, int memory_mhz) {
  const double volts = core_voltage_v(spec, graphics_mhz);
  const int reference_graphics_mhz = spec.boost_graphics_mhz();
  const double reference_s = kernel_seconds(spec, kernel, reference_graphics_mhz, spec.default_memory_mhz);
  const double now_s = kernel_seconds(spec, kernel, graphics_mhz, memory_mhz);
  const double work_rate = now_s > 0 ? reference_s / now_s : 1.0;
  // Part of the dynamic power is drawn every cycle (clock tree, idle units); the
  // rest per operation, so it follows the work done per second: a unit that
  // waits on the other clock switches less.
  const double share = spec.per_cycle_power_share;
  const double core_mhz = share * graphics_mhz + (1.0 - share) * reference_graphics_mhz * work_rate;
  const double memory_equivalent_mhz =
      share * memory_mhz + (1.0 - share) * spec.default_memory_mhz * work_rate;
  return spec.static_power_w + spec.memory_power_w_per_mhz * memory_equivalent_mhz * kernel.memory_activity +
         spec.dynamic_power_coefficient * kernel.core_activity * volts * volts * core_mhz;
}

double temperature_after_c(const SimGpuSpec& spec, double start_c, double power_w, double seconds) {
  const double steady_c = spec.ambient_temperature_c + spec.thermal_resistance_c_per_w * power_w;
  return steady_c + (start_c - steady_c) * std::exp(-seconds / spec.thermal_time_constant_s);
}

}  // namespace dvfslab::sim

namespace dvfslab {

double continued_voltage_v(const SimGpuSpec& chip, double mhz) {
  const double top = sim::highest_graphics_mhz(chip);
  if (mhz <= chip.voltage_knee_mhz || top <= chip.voltage_knee_mhz) return chip.voltage_min_v;
  const double rise = (mhz - chip.voltage_knee_mhz) / (top - chip.voltage_knee_mhz);
  return chip.voltage_min_v +
         (chip.voltage_max_v - chip.voltage_min_v) * std::pow(rise, chip.voltage_curve_exponent);
}

}  // namespace dvfslab
