// AMD Instinct MI300X (CDNA 3, 192 GB HBM3, OAM).
//
// Facts, from AMD's product page and data sheet ("AMD Instinct MI300X
// Accelerator", amd.com/en/products/accelerators/instinct/mi300/mi300x.html):
//   - peak engine clock 2100 MHz;
//   - HBM3 at 5.2 Gbps per pin (5.3 TB/s peak bandwidth): a 2600 MHz memory clock;
//   - typical board power 750 W (a power cap of 750 W is what `rocm-smi` shows on a
//     stock board, ROCm/legacy-rocm-build issue 5231);
//   - FP32 vector 81.7 TFLOPS.
// Not in AMD's public documents, so choices of the simulator (docs/simulation.md):
// the SCLK levels below the peak (100 MHz apart down to 500 MHz), a single MCLK
// level, and a lowest power cap of 40 % of the board power.
#include "gpu/sim/specs/specs.hpp"

namespace dvfslab::sim {

SimGpuSpec mi300x_spec() {
  SimGpuSpec spec;
  spec.key = "mi300x";
  spec.name = "AMD Instinct MI300X";
  spec.architecture = "CDNA 3";
  spec.memory_mhz = {2600};
  spec.graphics_mhz = {clocks_by_step(2100, 500, 1000)};
  spec.default_graphics_mhz = 2100;
  spec.default_memory_mhz = 2600;
  spec.power_limit_default_w = 750;
  spec.power_limit_min_w = 300;
  spec.power_limit_max_w = 750;
  spec.has_energy_counter = true;
  spec.has_locked_clocks = true;
  spec.has_memory_locked_clocks = true;
  spec.has_memory_temperature = true;

  // Model parameters: the H200's shape, scaled to this board's power and clocks
  // (no AMD measurement calibrates them).
  spec.idle_power_w = 90;
  spec.static_power_w = 90;
  spec.memory_power_w_per_mhz = 0.042;    // ≈110 W of HBM power at 2600 MHz, as the H200's HBM
  spec.dynamic_power_coefficient = 0.26;  // ≈550 W of core power at 2100 MHz, 1.0 V
  spec.voltage_min_v = 0.74;
  spec.voltage_max_v = 1.0;
  spec.voltage_knee_mhz = 1300;
  spec.voltage_curve_exponent = 1.5;
  spec.slow_clock_below_mhz = 1520;
  spec.slow_clock_gain = 0.6;
  spec.per_cycle_power_share = 0.2;
  spec.power_limit_headroom = 0.025;
  spec.calibration =
      "no AMD measurement: the H200's model shape scaled to the MI300X's clocks and board power";
  spec.sensor_period_s = 0.1;
  spec.average_power_window_s = 1.0;
  spec.ambient_temperature_c = 28;
  spec.thermal_resistance_c_per_w = 0.07;
  spec.thermal_time_constant_s = 30;
  spec.memory_temperature_offset_c = 4;
  spec.compute_speed_vs_v100 = 5.2;  // FP32 vector 81.7 TFLOPS against 15.7 (data sheets)
  spec.memory_speed_vs_v100 = 5.9;   // 5.3 TB/s against 0.9 TB/s
  spec.half_precision_speedup = 3.0;
  spec.tf32_speedup = 2.0;
  return spec;
}

}  // namespace dvfslab::sim
