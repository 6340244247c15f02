#pragma once
// The workload behind a measured core-clock curve as a kernel of a simulated GPU, so
// the twin's physics can be checked on a family's own workloads instead of the
// built-in DNN profiles (docs/simulation.md#a-familys-own-workloads-measured-2026-12-07).
#include <vector>

#include "dvfslab/sim_gpu.hpp"

namespace dvfslab::calibration {

// One setting of a measured curve: the knob (MHz or W), time and power there.
struct CurveReading {
  double knob = 0;
  double time_s = 0;
  double power_w = 0;
};

// How long a simulated run of a curve's workload lasts where only ratios and power
// count: neither depends on the length, and a short run keeps the power sensor's
// events few (the power-limit traces' iterations last seconds).
inline constexpr double short_simulated_run_s = 0.01;

// The supported clock nearest `mhz` (the first of two equally near).
int nearest_supported_mhz(const std::vector<int>& clocks, double mhz);

// `spec`'s clock for a curve's `clock_mhz`: the same fraction of `spec`'s boost clock
// as of the curve's top clock, rounded to the nearest supported clock.
int mapped_clock_mhz(const SimGpuSpec& spec, double clock_mhz, double curve_top_mhz);

// A kernel that runs the curve's time at `spec`'s boost clock and reads, from the
// curve (core clocks in MHz, any order, repetitions already averaged):
//  - the share of its time bound by the SM clock, from its time at the lowest of its
//    clocks that `spec`'s slow-clock stretch does not reach (time there over time at
//    the top, against the clock ratio; 0 to 1);
//  - how much that time stretches below the slow clock (slow_clock_gain), from its
//    time at the lowest clock (none when it has no SM-bound time or no clock there);
//  - its core activity, so that it draws the curve's power at the top clock (0 when
//    even none would draw more);
//  - its memory activity is given (a core-clock curve does not tell it).
// Its interior — where its energy is least and what that costs — is the twin's
// prediction, not read. Throws ConfigError for a curve of fewer than two clocks or
// with no clock between the stretch and the top.
SimKernel kernel_from_core_curve(const SimGpuSpec& spec, std::vector<CurveReading> curve,
                                 double memory_activity);

// A kernel read from a measured power-limit curve (limits in W, any order, on
// `spec`'s own limits): its time at the top limit; its core activity from its draw
// there (as for a core-clock curve; a draw the top limit already held down reads
// low); the SM-bound share whose time under the lowest limit over its time under
// the top one is the curve's (bisection between 0 and 1); the GPU's stretch;
// `memory_activity` given. The share is weakly determined: under a binding limit a
// more SM-bound kernel draws less per clock and gets a higher one, so the time
// changes little with the share, and not monotonically from one clock step to the
// next (a 200 W kernel on sim:v100 under 100 W: 1.87–1.97× across shares 0.4–0.95).
// Throws ConfigError for a curve of fewer than two limits, and for a limit `spec`
// does not offer.
SimKernel kernel_from_power_limit_curve(const SimGpuSpec& spec, std::vector<CurveReading> curve,
                                        double memory_activity);

}  // namespace dvfslab::calibration
