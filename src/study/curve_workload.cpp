#include "study/curve_workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "dvfslab/error.hpp"

namespace dvfslab::calibration {
namespace {

// Power drawn while `kernel` runs once at `spec`'s default settings (its boost clock).
double power_at_boost_w(const SimGpuSpec& spec, SimKernel kernel) {
  kernel.scalable_s = short_simulated_run_s;
  SimGpu gpu(spec, SimTimeMode::virtual_time);
  const double energy_before = gpu.true_energy_j();
  const double seconds = gpu.run(kernel);
  return (gpu.true_energy_j() - energy_before) / seconds;
}

// The core activity at which `kernel` draws `power_w` at the boost clock. Power is
// linear in it while no limit binds, which a small activity never reaches:
// extrapolate from none and that one. 0 when even none draws more.
double core_activity_drawing(const SimGpuSpec& spec, SimKernel kernel, double power_w) {
  constexpr double probe_activity = 0.1;
  kernel.core_activity = 0;
  const double without_w = power_at_boost_w(spec, kernel);
  kernel.core_activity = probe_activity;
  const double with_w = power_at_boost_w(spec, kernel);
  return std::max(0.0, probe_activity * (power_w - without_w) / (with_w - without_w));
}

// Seconds one run of `kernel` takes under a power limit of `limit_w`.
double seconds_under_limit(const SimGpuSpec& spec, const SimKernel& kernel, double limit_w) {
  SimGpu gpu(spec, SimTimeMode::virtual_time);
  gpu.set_power_limit(limit_w);
  return gpu.run(kernel);
}

std::vector<CurveReading> sorted_by_knob(std::vector<CurveReading> curve, const char* knob) {
  for (const CurveReading& reading : curve) {
    if (!(std::isfinite(reading.knob) && reading.knob > 0 && std::isfinite(reading.time_s) &&
          reading.time_s > 0 && std::isfinite(reading.power_w) && reading.power_w > 0)) {
      throw ConfigError(
          fmt::format("a curve reading at {} has time {} s and power {} W: a workload is read "
                      "only from positive, finite readings",
                      reading.knob, reading.time_s, reading.power_w));
    }
  }
  std::sort(curve.begin(), curve.end(),
            [](const CurveReading& a, const CurveReading& b) { return a.knob < b.knob; });
  if (curve.size() < 2 || curve.front().knob >= curve.back().knob) {
    throw ConfigError(fmt::format("a curve of fewer than two {} has no workload to read from it", knob));
  }
  return curve;
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

SimKernel kernel_from_core_curve(const SimGpuSpec& spec, std::vector<CurveReading> readings,
                                 double memory_activity) {
  const std::vector<CurveReading> curve = sorted_by_knob(std::move(readings), "core clocks");
  const CurveReading& top = curve.back();
  const int boost_mhz = spec.boost_graphics_mhz();
  // Below the slow clock the SM-bound time may stretch beyond the clock ratio (read
  // next), so the share is read above it.
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
  kernel.core_activity = core_activity_drawing(spec, kernel, top.power_w);
  return kernel;
}

SimKernel kernel_from_power_limit_curve(const SimGpuSpec& spec, std::vector<CurveReading> readings,
                                        double memory_activity) {
  const std::vector<CurveReading> curve = sorted_by_knob(std::move(readings), "power limits");
  const CurveReading& top = curve.back();
  const CurveReading& lowest = curve.front();
  SimKernel kernel;
  kernel.fixed_s = 0;
  kernel.scalable_s = top.time_s;
  kernel.memory_activity = memory_activity;
  // At the boost clock the work rate is the reference one whatever the SM-bound
  // share, so the draw gives the activity first.
  kernel.core_activity = core_activity_drawing(spec, kernel, top.power_w);
  // A lower limit holds the clock down; the more SM-bound the work, the more time
  // that costs. Bisection for the share that costs the curve's time at its lowest
  // limit, clamped to 0..1.
  const double wanted = lowest.time_s / top.time_s;
  const auto time_ratio = [&](double share) {
    SimKernel trial = kernel;
    trial.scalable_s = short_simulated_run_s;
    trial.compute_fraction = share;
    return seconds_under_limit(spec, trial, lowest.knob) / seconds_under_limit(spec, trial, top.knob);
  };
  double below = 0, above = 1;
  if (wanted <= time_ratio(below)) {
    above = below;
  } else if (wanted >= time_ratio(above)) {
    below = above;
  }
  constexpr int halvings = 30;
  for (int i = 0; i < halvings && below < above; ++i) {
    const double middle = (below + above) / 2;
    (time_ratio(middle) < wanted ? below : above) = middle;
  }
  kernel.compute_fraction = (below + above) / 2;
  return kernel;
}

}  // namespace dvfslab::calibration
