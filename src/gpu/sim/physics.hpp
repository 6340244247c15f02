#pragma once
// The simulator's physics as pure functions of a GPU spec, a kernel and clocks:
// the voltage–frequency curve, the time model and the power model of
// docs/architecture.md#the-simulated-gpu.
#include "dvfslab/sim_gpu.hpp"

namespace dvfslab::sim {

// The highest graphics clock of any memory clock.
int highest_graphics_mhz(const SimGpuSpec& spec);

// Core voltage at `graphics_mhz`: flat at voltage_min_v up to the knee, then rising
// as rise^voltage_curve_exponent to voltage_max_v at the highest supported graphics clock.
double core_voltage_v(const SimGpuSpec& spec, int graphics_mhz);

// Seconds one repeat of `kernel` takes at the given clocks; below
// slow_clock_below_mhz the SM-bound part grows faster than 1/fc.
double kernel_seconds(const SimGpuSpec& spec, const SimKernel& kernel, int graphics_mhz, int memory_mhz);

// Share of one repeat's time spent waiting on memory (drives memory utilisation).
double memory_bound_share(const SimGpuSpec& spec, const SimKernel& kernel, int graphics_mhz, int memory_mhz);

// Board power while `kernel` runs: P0 + γ·a_mem·f̃m + c·a_core·V(fc)²·f̃c, where each
// f̃ mixes the clock itself (per_cycle_power_share) with the reference clock times the
// work rate relative to the reference clocks (docs/simulation.md).
double busy_power_w(const SimGpuSpec& spec, const SimKernel& kernel, int graphics_mhz, int memory_mhz);

// Temperature after `seconds` of first-order heating at constant `power_w`,
// starting from `start_c`.
double temperature_after_c(const SimGpuSpec& spec, double start_c, double power_w, double seconds);

}  // namespace dvfslab::sim
