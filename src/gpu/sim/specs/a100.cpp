// NVIDIA A100-SXM4-40GB (Ampere).
//
// Facts and their sources:
//   - memory clock 1215 MHz, the only one; default application clocks graphics
//     1095 MHz, memory 1215 MHz; max graphics clock 1410 MHz; power limit default
//     400 W, min 100 W, max 400 W: an `nvidia-smi -q` published in
//     NVIDIA/nvidia-docker issue #1648 (the excerpt shows no product name; 1215 MHz
//     HBM2 with a 400 W limit is the 40 GB SXM4 board);
//   - graphics clocks 1410 down to 210 MHz in 15 MHz steps (81 clocks): derived, not
//     copied from an A100 dump. The top is the dump's max clock; the 15 MHz step is
//     the one Ampere and Hopper data-centre boards use (the H200's table has it);
//     the 210 MHz bottom is an assumption;
//   - under load with the default application clocks the SM runs at 1410 MHz (GPU
//     Boost; `nvidia-smi -q` in NVIDIA/DCGM issue #152 shows 1410 MHz against
//     1155 MHz default application clocks on an A100 80 GB).
// NVML documents nvmlDeviceGetPowerUsage as a 1 s average on Ampere and newer except
// the A100, so here it follows the sensor.
#include "gpu/sim/specs/specs.hpp"

namespace dvfslab::sim {

SimGpuSpec a100_spec() {
  SimGpuSpec spec;
  spec.key = "a100";
  spec.name = "NVIDIA A100-SXM4-40GB";
  spec.architecture = "Ampere";
  spec.memory_mhz = {1215};
  spec.graphics_mhz = {clocks_by_step(1410, 210, 150)};
  spec.default_graphics_mhz = 1095;
  spec.default_memory_mhz = 1215;
  spec.power_limit_default_w = 400;
  spec.power_limit_min_w = 100;
  spec.power_limit_max_w = 400;
  spec.has_energy_counter = true;
  spec.has_locked_clocks = true;
  spec.has_memory_locked_clocks = true;
  spec.has_memory_temperature = true;

  // Model parameters. No published A100 sweep was handed to this project: the V–f
  // shape, slow-clock stretch and power split are the V100's (the nearest family
  // with a core-clock sweep, v100-kernels-core.csv) at the same fractions of the
  // top clock; bench/sim_calibration checks the A100 against the V100's medians.
  spec.idle_power_w = 52;
  spec.static_power_w = 38;               // relative power at 0.29 of the top clock ≈0.3 (V100 family)
  spec.memory_power_w_per_mhz = 0.049;    // ≈60 W of HBM2 power at 1215 MHz, full activity
  spec.dynamic_power_coefficient = 0.18;  // ≈250 W of core power at 1410 MHz, 1.0 V, full activity
  spec.voltage_min_v = 0.76;
  spec.voltage_max_v = 1.0;
  spec.voltage_knee_mhz = 870;
  spec.voltage_curve_exponent = 1.5;
  spec.slow_clock_below_mhz = 1020;
  spec.slow_clock_gain = 0.6;
  spec.per_cycle_power_share = 0.2;
  spec.power_limit_headroom = 0.04;
  spec.calibration =
      "no A100 data: the nearest family, the published V100 core-clock sweep "
      "(data/published/v100-kernels-core.csv)";
  spec.sensor_period_s = 0.1;
  spec.average_power_window_s = 0.1;
  spec.ambient_temperature_c = 28;
  spec.thermal_resistance_c_per_w = 0.11;
  spec.thermal_time_constant_s = 30;
  spec.memory_temperature_offset_c = 3;
  spec.compute_speed_vs_v100 = 1.25;  // FP32 19.5 TFLOPS against 15.7 (datasheets)
  spec.memory_speed_vs_v100 = 1.73;   // 1.56 TB/s against 0.9 TB/s
  spec.half_precision_speedup = 3.0;
  spec.tf32_speedup = 2.0;
  return spec;
}

}  // namespace dvfslab::sim
