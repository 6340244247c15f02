// AMD Instinct MI250X (CDNA 2, 128 GB HBM2e, OAM).
//
// Facts, from AMD's product page and data sheet ("AMD Instinct MI250X
// Accelerator", amd.com/en/products/accelerators/instinct/mi200/mi250x.html):
//   - peak engine clock 1700 MHz;
//   - memory clock 1.6 GHz (HBM2e, 3.2 TB/s peak bandwidth);
//   - typical board power 500 W (air cooled; 560 W peak liquid cooled);
//   - FP32 vector 47.9 TFLOPS.
// Not in AMD's public documents, so choices of the simulator (docs/simulation.md):
// the SCLK levels below the peak (100 MHz apart down to 500 MHz), a single MCLK
// level, and a lowest power cap of 40 % of the board power.
#include "gpu/sim/specs/specs.hpp"

namespace dvfslab::sim {

SimGpuSpec mi250x_spec() {
  SimGpuSpec spec;
  spec.key = "mi250x";
  spec.name = "AMD Instinct MI250X";
  spec.architecture = "CDNA 2";
  spec.memory_mhz = {1600};
  spec.graphics_mhz = {clocks_by_step(1700, 500, 1000)};
  spec.default_graphics_mhz = 1700;
  spec.default_memory_mhz = 1600;
  spec.power_limit_default_w = 500;
  spec.power_limit_min_w = 200;
  spec.power_limit_max_w = 500;
  spec.has_energy_counter = true;
  spec.has_locked_clocks = true;
  spec.has_memory_locked_clocks = true;
  spec.has_memory_temperature = true;

  // Model parameters: the H200's shape, scaled to this board's power and clocks
  // (no AMD measurement calibrates them).
  spec.idle_power_w = 90;
  spec.static_power_w = 90;
  spec.memory_power_w_per_mhz = 0.069;    // ≈110 W of HBM power at 1600 MHz, as the H200's HBM
  spec.dynamic_power_coefficient = 0.18;  // ≈300 W of core power at 1700 MHz, 1.0 V
  spec.voltage_min_v = 0.74;
  spec.voltage_max_v = 1.0;
  spec.voltage_knee_mhz = 1050;
  spec.voltage_curve_exponent = 1.5;
  spec.slow_clock_below_mhz = 1230;
  spec.slow_clock_gain = 0.6;
  spec.per_cycle_power_share = 0.2;
  spec.power_limit_headroom = 0.025;
  spec.calibration =
      "no AMD measurement: the H200's model shape scaled to the MI250X's clocks and board power";
  spec.sensor_period_s = 0.1;
  spec.average_power_window_s = 1.0;
  spec.ambient_temperature_c = 28;
  spec.thermal_resistance_c_per_w = 0.08;
  spec.thermal_time_constant_s = 30;
  spec.memory_temperature_offset_c = 4;
  spec.compute_speed_vs_v100 = 3.1;  // FP32 vector 47.9 TFLOPS against 15.7 (data sheets)
  spec.memory_speed_vs_v100 = 3.6;   // 3.2 TB/s against 0.9 TB/s
  spec.half_precision_speedup = 3.0;
  spec.tf32_speedup = 1.0;  // CDNA 2 has no TF32
  return spec;
}

}  // namespace dvfslab::sim
