// AMD Instinct MI250X (CDNA 2, 128 GB HBM2e, OAM).
//
// Facts, from AMD's product page and data sheet ("AMD Instinct MI250X
// Accelerator", amd.com/en/products/accelerators/instinct/mi200/mi250x.html):
//   - peak engine clock 1700 MHz;
//   - memory clock 1.6 GHz (HBM2e, 3.2 TB/s peak bandwidth);
//   - typical board power 500 W (air cooled; 560 W peak liquid cooled);
//   - FP32 vector 47.9 TFLOPS.
// The simulator's choices where AMD publishes nothing: amd_instinct.cpp.
#include "gpu/sim/specs/amd_instinct.hpp"
#include "gpu/sim/specs/specs.hpp"

namespace dvfslab::sim {

SimGpuSpec mi250x_spec() {
  SimGpuSpec spec = amd_instinct_spec({.key = "mi250x",
                                       .model = "MI250X",
                                       .architecture = "CDNA 2",
                                       .peak_engine_mhz = 1700,
                                       .memory_mhz = 1600,
                                       .board_power_w = 500});

  // Model parameters: the H200's shape, scaled to this board's power and clocks
  // (no AMD measurement calibrates them).
  spec.memory_power_w_per_mhz = 0.069;    // ≈110 W of HBM power at 1600 MHz, as the H200's HBM
  spec.dynamic_power_coefficient = 0.18;  // ≈300 W of core power at 1700 MHz, 1.0 V
  spec.voltage_knee_mhz = 1050;
  spec.slow_clock_below_mhz = 1230;
  spec.thermal_resistance_c_per_w = 0.08;
  spec.compute_speed_vs_v100 = 3.1;  // FP32 vector 47.9 TFLOPS against 15.7 (data sheets)
  spec.memory_speed_vs_v100 = 3.6;   // 3.2 TB/s against 0.9 TB/s
  spec.tf32_speedup = 1.0;           // CDNA 2 has no TF32
  return spec;
}

}  // namespace dvfslab::sim
