// NVIDIA Tesla V100 PCIe 16 GB (Volta) — the V100 of the study (core clocks swept
// 510–1380 MHz).
//
// Facts and their sources:
//   - memory clock 877 MHz, the only one (HBM2; NVIDIA Tesla V100 PCIe datasheet:
//     900 GB/s = 877 MHz × 2 × 4096 bit);
//   - graphics clocks 1380 MHz (the datasheet's maximum boost) down to 135 MHz on
//     NVML's 7.5 MHz grid rounded down to whole MHz (1380, 1372, 1365, ...), 167
//     clocks. The grid and its 135 MHz bottom are those of a published
//     `nvidia-smi -q -x` of Tesla V100S-PCIE-32GB boards (same Volta PCIe family:
//     1597, 1590, 1582, ... 142, 135 MHz) cut at the V100 PCIe's 1380 MHz top; no
//     dump of a V100 PCIe 16 GB itself was found. Every clock measured in the
//     NV-DVFS-Benchmark V100 PCIe data (data/published/v100-kernels-core.csv:
//     405, 502, 600, 705, 802, 945, 1087, 1102, 1237, 1380) lies on it;
//   - default application clocks: graphics 1245 MHz (the datasheet's base clock;
//     the V100S dump shows the same 1245 MHz default, and its SM at 1410 MHz under
//     load: GPU Boost runs above the default application clock), memory 877 MHz;
//   - power limit: default and max 250 W (datasheet board power); min 100 W, the
//     lowest limit in the Zeus V100 power-limit traces
//     (data/published/v100-dnn-power-limit.csv, 100–250 W);
//   - idle board power about 24 W (published `nvidia-smi` output of an idle
//     Tesla V100-PCIE-16GB: "24W / 250W").
// Energy counter and locked SM clocks: Volta and newer; memory locks: Ampere and
// newer only (NVML reference).
#include "gpu/sim/specs/specs.hpp"

namespace dvfslab::sim {

SimGpuSpec v100_spec() {
  SimGpuSpec spec;
  spec.key = "v100";
  spec.name = "Tesla V100-PCIE-16GB";
  spec.architecture = "Volta";
  spec.memory_mhz = {877};
  spec.graphics_mhz = {clocks_by_step(1380, 135, 75)};
  spec.default_graphics_mhz = 1245;
  spec.default_memory_mhz = 877;
  spec.power_limit_default_w = 250;
  spec.power_limit_min_w = 100;
  spec.power_limit_max_w = 250;
  spec.has_energy_counter = true;
  spec.has_locked_clocks = true;
  spec.has_memory_locked_clocks = false;
  spec.has_memory_temperature = true;

  // Model parameters, calibrated by bench/sim_calibration against the published
  // V100 sweeps (docs/simulation.md#calibration has the real-vs-simulated table):
  //   v100-kernels-core.csv, medians over its 20 kernels of time and power relative
  //   to 1380 MHz at each measured clock: 945 MHz 1.27× / 0.62, 802 MHz 1.52× /
  //   0.55, 405 MHz 4.95× / 0.29; energy optimum 945 MHz (0.685 of the top clock);
  //   v100-dnn-power-limit.csv: power drawn at 250 W (median 177 W), power over the
  //   limit where the limit binds (median 0.92–0.97), energy optimum 125 W.
  spec.idle_power_w = 24;
  spec.static_power_w = 30;               // with the rest, power at 405 MHz ≈ 0.3 of that at 1380 MHz
  spec.memory_power_w_per_mhz = 0.0342;   // ≈30 W of HBM2 power at 877 MHz, full activity
  spec.dynamic_power_coefficient = 0.14;  // median simulated draw at 1380 MHz ≈186 W (real 177 W)
  spec.voltage_min_v = 0.76;              // power relative to 1380 MHz at 405 MHz: real 0.29
  spec.voltage_max_v = 1.0;
  spec.voltage_knee_mhz = 850;        // with the exponent: relative power 0.62 at 945,
  spec.voltage_curve_exponent = 1.5;  // 0.71 at 1087, 0.84 at 1237 MHz (real 0.62/0.71/0.85)
  spec.slow_clock_below_mhz = 1000;   // relative time 2.8× at 502, 4.2× at 405 MHz
  spec.slow_clock_gain = 0.6;         // (real medians 2.8×, 4.95×)
  spec.per_cycle_power_share = 0.2;   // so power falls with the work rate at low clocks
  spec.power_limit_headroom = 0.06;   // capped draw 0.94 of the limit (real median 0.92–0.97)
  spec.calibration =
      "the published V100 core-clock sweep (data/published/v100-kernels-core.csv) and "
      "power-limit sweep (v100-dnn-power-limit.csv)";
  spec.sensor_period_s = 0.1;
  // Before Ampere nvmlDeviceGetPowerUsage follows the sensor without a 1 s average.
  spec.average_power_window_s = 0.1;
  spec.ambient_temperature_c = 30;
  spec.thermal_resistance_c_per_w = 0.18;
  spec.thermal_time_constant_s = 25;
  spec.memory_temperature_offset_c = 2;
  spec.compute_speed_vs_v100 = 1.0;
  spec.memory_speed_vs_v100 = 1.0;
  spec.half_precision_speedup = 2.5;  // tensor cores, as seen end to end in CNN training
  spec.tf32_speedup = 1.0;            // no TF32 before Ampere
  return spec;
}

}  // namespace dvfslab::sim
