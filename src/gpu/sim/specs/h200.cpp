// NVIDIA H200 (Hopper, 141 GB HBM3e, SXM).
//
// Facts, read off an NVIDIA H200 with driver 580 through
// `nvidia-smi -q -d SUPPORTED_CLOCKS,POWER,CLOCK` (read-only queries):
//   - supported memory clocks: 3201 and 2201 MHz;
//   - for each of them the same 110 graphics clocks, 1980 down to 345 MHz in
//     15 MHz steps;
//   - default application clocks: graphics 1980 MHz, memory 3201 MHz;
//   - power limit: default 700 W, min 200 W, max 700 W;
//   - idle board power 75–125 W.
// Energy counter and locked clocks: Volta and newer; memory locks: Ampere and newer
// (NVML reference, nvmlDeviceGetTotalEnergyConsumption, nvmlDeviceSetGpuLockedClocks,
// nvmlDeviceSetMemoryLockedClocks).
#include "gpu/sim/specs/specs.hpp"

namespace dvfslab::sim {

SimGpuSpec h200_spec() {
  SimGpuSpec spec;
  spec.key = "h200";
  spec.name = "NVIDIA H200";
  spec.architecture = "Hopper";
  spec.memory_mhz = {3201, 2201};
  spec.graphics_mhz = {clocks_by_step(1980, 345, 150), clocks_by_step(1980, 345, 150)};
  spec.default_graphics_mhz = 1980;
  spec.default_memory_mhz = 3201;
  spec.power_limit_default_w = 700;
  spec.power_limit_min_w = 200;
  spec.power_limit_max_w = 700;
  spec.has_energy_counter = true;
  spec.has_locked_clocks = true;
  spec.has_memory_locked_clocks = true;
  spec.has_memory_temperature = true;

  // Model parameters. Power: set against the H200's own readings at its default
  // settings (docs/results/h200/default_sweep: 12 built-in cases at 1980 MHz drawing
  // 445–683 W, VGG-16 inference held at a mean 1975 MHz and 683 W by sw_power_cap);
  // the workload profiles' core activities are fitted to those readings with these
  // coefficients. V–f shape and slow-clock stretch: the V100's at the same fractions
  // of the top clock (the nearest family with a core-clock sweep).
  spec.idle_power_w = 90;    // inside the observed 75–125 W
  spec.static_power_w = 90;  // power at 0.29 of the top clock ≈0.3 of that at the top (V100 family)
  spec.memory_power_w_per_mhz = 0.034;    // ≈110 W of HBM3e power at 3201 MHz, full activity
  spec.dynamic_power_coefficient = 0.31;  // ≈610 W of core power at 1980 MHz, 1.0 V, full activity
  spec.voltage_min_v = 0.74;
  spec.voltage_max_v = 1.0;
  spec.voltage_knee_mhz = 1220;
  spec.voltage_curve_exponent = 1.5;
  spec.slow_clock_below_mhz = 1430;
  spec.slow_clock_gain = 0.6;
  spec.per_cycle_power_share = 0.2;
  spec.power_limit_headroom = 0.025;  // the capped VGG-16 case drew 683 W under 700 W
  spec.calibration =
      "an H200's own power and SM clock for the 12 built-in cases at default settings "
      "(docs/results/h200/default_sweep) and the V100 core-clock sweep's shape";
  spec.sensor_period_s = 0.1;
  spec.average_power_window_s = 1.0;  // nvmlDeviceGetPowerUsage is a 1 s average on Hopper
  spec.ambient_temperature_c = 28;
  spec.thermal_resistance_c_per_w = 0.07;
  spec.thermal_time_constant_s = 30;
  spec.memory_temperature_offset_c = 4;
  spec.compute_speed_vs_v100 = 4.3;  // FP32 67 TFLOPS against 15.7 (datasheets)
  spec.memory_speed_vs_v100 = 5.3;   // 4.8 TB/s against 0.9 TB/s
  spec.half_precision_speedup = 3.0;
  spec.tf32_speedup = 2.0;
  // Workload power profiles: an ASSUMPTION, not a fact of this GPU. A real H200 on
  // driver 580 answers Not Supported for them (docs/profiles.md); the simulated one
  // offers the table of the fake NVML so that profile code has a GPU to run on.
  // Priorities follow the ids; max-p/max-q and compute/memory-bound conflict; the
  // only effect modelled is a power cap, as a share of the default limit, while a
  // profile is enforced (docs/simulation.md#workload-power-profiles).
  spec.workload_profiles = {
      {0, 0, {1}, 1.0},   // max-p: no cap
      {1, 1, {0}, 0.6},   // max-q: 420 W
      {2, 2, {3}, 1.0},   // compute: no cap
      {3, 3, {2}, 0.75},  // memory-bound: 525 W
      {6, 6, {}, 0.85},   // llm-inference: 595 W
      {7, 7, {}, 1.0},    // llm-training: no cap
  };
  return spec;
}

}  // namespace dvfslab::sim
