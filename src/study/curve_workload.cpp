#include "study/curve_workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "dvfslab/error.hpp"

namespace dvfslab::calibration {
namespace {

// Power drawn while `kernel` runs once at `spec`'s default settings (its boost clock).
double power_at_boost_w(const SimGpuSpec& spec, const SimKernel& kernel) {
  SimGpu gpu(spec, SimTimeMode::virtual_time);
  const double energy_before = gpu.true_energy_j();
  const double seconds = gpu.run(kernel);
  return (gpu.true_energy_j() - energy_before) / seconds;
}

}  // namespace
int nearest_supported_mhz(const std::vector<int>& clocks, double mhz) {
  return *std::min_element(clocks.begin(), clocks.end(),
                           [mhz](int a, int b) { return std::abs(a - mhz) < std::abs(b - mhz); });
}

int mapped_clock_mhz(const SimGpuSpec& spec, double clock_mhz, double curve_top_mhz) {
  return nearest_supported_mhz(spec.graphics_mhz_for(spec.default_memory_mhz),
                               clock_mhz / curve_top_mhz * spec.boost_graphics_mhz());
}

SimKernel kernel_from_core_curve(const SimGpuSpec& spec, std::vector<CurveReading> curve,
                                 double memory_activity) {
  std::sort(curve.begin(), curve.end(),
            [](const CurveReading& a, const CurveReading& b) { return a.knob < b.knob; });
  if (curve.size() < 2 || curve.front().knob >= curve.back().knob) {
    throw ConfigError("a curve of fewer than two core clocks has no workload to read from it");
  }
  const CurveReading& top = curve.back();
  const int boost_mhz = spec.boost_graphics_mhz();
  // Below the stretch, time grows faster than the clock ratio for reasons of the
  // board (docs/simulation.md), so the SM-bound share is read above it.
  const auto unstretched = std::find_if(curve.begin(), curve.end() - 1, [&](const CurveReading& reading) {
    const int mhz = mapped_clock_mhz(spec, reading.knob, top.knob);
    return mhz >= spec.slow_clock_below_mhz && mhz < boost_mhz;
  });
  if (unstretched == curve.end() - 1) {
    throw ConfigError(
        fmt::format("the curve has no clock between {} MHz and the top of {} (mapped onto it) "
                    "to read how SM-bound its workload is",
                    spec.slow_clock_below_mhz, spec.name));
  }
  const double clock_ratio =
      static_cast<double>(boost_mhz) / mapped_clock_mhz(spec, unstretched->knob, top.knob);
  const double time_ratio = unstretched->time_s / top.time_s;

  SimKernel kernel;
  kernel.fixed_s = 0;
  kernel.scalable_s = top.time_s;
  kernel.compute_fraction = std::clamp((time_ratio - 1.0) / (clock_ratio - 1.0), 0.0, 1.0);
  // The stretch below the slow clock is the kernel's own: read at the lowest clock,
  // where it is largest. A kernel with no SM-bound time has nothing to stretch.
  const CurveReading& lowest = curve.front();
  const int lowest_mhz = mapped_clock_mhz(spec, lowest.knob, top.knob);
  if (kernel.compute_fraction > 0 && lowest_mhz < spec.slow_clock_below_mhz) {
    const double stretch = (lowest.time_s / top.time_s - (1.0 - kernel.compute_fraction)) /
                           (kernel.compute_fraction * boost_mhz / lowest_mhz);
    kernel.slow_clock_gain =
        std::max(0.0, (stretch - 1.0) / std::pow(spec.slow_clock_below_mhz / lowest_mhz - 1.0, 1.5));
  }
  kernel.memory_activity = memory_activity;
  // Power is linear in the core activity while no limit binds, which a small
  // activity never reaches: extrapolate from none and that one.
  constexpr double probe_activity = 0.1;
  kernel.core_activity = 0;
  const double without_w = power_at_boost_w(spec, kernel);
  kernel.core_activity = probe_activity;
  const double with_w = power_at_boost_w(spec, kernel);
  kernel.core_activity = std::max(0.0, probe_activity * (top.power_w - without_w) / (with_w - without_w));
  return kernel;
}

}  // namespace dvfslab::calibration
