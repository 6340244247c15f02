// NVIDIA GeForce RTX 2080 Ti (Turing), reference board — one of the study's GPUs,
// where it also swept the memory clock.
//
// Facts and their sources:
//   - a published `nvidia-smi -q -x` of two GeForce RTX 2080 Ti boards (driver of
//     the Turing era) reports: max clocks graphics 2115 MHz, memory 7000 MHz (the
//     14 Gbps GDDR6 data rate); idle at 300 MHz graphics / 405 MHz memory drawing
//     5–7 W; power limit min 100 W, max 280 W (default 257 W on that partner
//     board); application clocks, default application clocks, memory temperature
//     and even the supported-clocks list: N/A;
//   - NVIDIA's reference specifications: base clock 1350 MHz, board power 250 W
//     (used as the default power limit);
//   - derived, not read off a board: the supported memory clocks 7000, 6800, 5000,
//     810 and 405 MHz (as Turing GeForce boards' tables list GDDR6 clocks) and the
//     graphics clocks 2115 down to 300 MHz in 15 MHz steps (122 clocks) with the
//     memory at 7000, 6800, 5000 or 810 MHz, 405 down to 300 MHz at 405 MHz.
//     The twin offers application clocks (NVML documents them for Maxwell and
//     newer GeForce) with the base clock and top memory clock as defaults, so
//     that a sweep can choose the memory clock as the study did.
// Energy counter and locked SM clocks: Volta and newer (so Turing has them); memory
// locks: Ampere and newer only.
#include "gpu/sim/specs/specs.hpp"

namespace dvfslab::sim {

SimGpuSpec rtx2080ti_spec() {
  SimGpuSpec spec;
  spec.key = "rtx2080ti";
  spec.name = "NVIDIA GeForce RTX 2080 Ti";
  spec.architecture = "Turing";
  spec.memory_mhz = {7000, 6800, 5000, 810, 405};
  const std::vector<int> full = clocks_by_step(2115, 300, 150);
  spec.graphics_mhz = {full, full, full, full, clocks_by_step(405, 300, 150)};
  spec.default_graphics_mhz = 1350;
  spec.default_memory_mhz = 7000;
  spec.power_limit_default_w = 250;
  spec.power_limit_min_w = 100;
  spec.power_limit_max_w = 280;
  spec.has_energy_counter = true;
  spec.has_locked_clocks = true;
  spec.has_memory_locked_clocks = false;
  spec.has_memory_temperature = false;

  // Model parameters. Core clock: the V100's V–f shape and slow-clock stretch at the
  // same fractions of the top clock (Turing's SM is Volta's; v100-kernels-core.csv
  // is the nearest core-clock sweep). Memory: against the GDDR5X Pascal boards of
  // pascal-caffe-dnn-core-mem.csv (TITAN X Pascal, GTX 1080 Ti), where memory
  // clock × 0.7 at the top core clock costs a median 19 % of time and saves 12 %
  // of power; bench/sim_calibration compares 7000 → 5000 MHz with them.
  spec.idle_power_w = 7;
  spec.idle_memory_mhz = 405;
  spec.static_power_w = 16;
  spec.memory_power_w_per_mhz = 0.0085;    // ≈60 W of GDDR6 power at 7000 MHz, full activity
  spec.dynamic_power_coefficient = 0.075;  // ≈160 W of core power at 2115 MHz, 1.0 V, full activity
  spec.voltage_min_v = 0.76;
  spec.voltage_max_v = 1.0;
  spec.voltage_knee_mhz = 1300;
  spec.voltage_curve_exponent = 1.5;
  spec.slow_clock_below_mhz = 1530;
  spec.slow_clock_gain = 0.6;
  spec.per_cycle_power_share = 0.2;
  spec.power_limit_headroom = 0.05;
  spec.calibration =
      "the nearest families: the published V100 core-clock sweep (core clock) and the GDDR "
      "Pascal sweep (pascal-caffe-dnn-core-mem.csv, memory clock)";
  spec.sensor_period_s = 0.1;
  spec.average_power_window_s = 0.1;
  spec.ambient_temperature_c = 30;
  spec.thermal_resistance_c_per_w = 0.2;
  spec.thermal_time_constant_s = 20;
  spec.memory_temperature_offset_c = 0;
  spec.compute_speed_vs_v100 = 0.95;  // FP32 13.4 TFLOPS against 14 (PCIe)
  spec.memory_speed_vs_v100 = 0.68;   // 616 GB/s against 900 GB/s
  spec.half_precision_speedup = 2.5;  // tensor cores
  spec.tf32_speedup = 1.0;
  return spec;
}

}  // namespace dvfslab::sim
