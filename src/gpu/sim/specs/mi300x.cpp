// AMD Instinct MI300X (CDNA 3, 192 GB HBM3, OAM).
//
// Facts, from AMD's product page and data sheet ("AMD Instinct MI300X
// Accelerator", amd.com/en/products/accelerators/instinct/mi300/mi300x.html):
//   - peak engine clock 2100 MHz;
//   - HBM3 at 5.2 Gbps per pin (5.3 TB/s peak bandwidth): a 2600 MHz memory clock;
//   - typical board power 750 W (a power cap of 750 W is what `rocm-smi` shows on a
//     stock board, ROCm/legacy-rocm-build issue 5231);
//   - FP32 vector 81.7 TFLOPS.
// The simulator's choices where AMD publishes nothing: amd_instinct.cpp.
#include "gpu/sim/specs/amd_instinct.hpp"
#include "gpu/sim/specs/specs.hpp"

namespace dvfslab::sim {

SimGpuSpec mi300x_spec() {
  SimGpuSpec spec = amd_instinct_spec({.key = "mi300x",
                                       .model = "MI300X",
                                       .architecture = "CDNA 3",
                                       .peak_engine_mhz = 2100,
                                       .memory_mhz = 2600,
                                       .board_power_w = 750});

  // Model parameters: the H200's shape, scaled to this board's power and clocks
  // (no AMD measurement calibrates them).
  spec.memory_power_w_per_mhz = 0.042;    // ≈110 W of HBM power at 2600 MHz, as the H200's HBM
  spec.dynamic_power_coefficient = 0.26;  // ≈550 W of core power at 2100 MHz, 1.0 V
  spec.voltage_knee_mhz = 1300;
  spec.slow_clock_below_mhz = 1520;
  spec.thermal_resistance_c_per_w = 0.07;
  spec.compute_speed_vs_v100 = 5.2;  // FP32 vector 81.7 TFLOPS against 15.7 (data sheets)
  spec.memory_speed_vs_v100 = 5.9;   // 5.3 TB/s against 0.9 TB/s
  spec.tf32_speedup = 2.0;
  return spec;
}

}  // namespace dvfslab::sim
