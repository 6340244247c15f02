// NVIDIA Tesla P100-PCIE-16GB (Pascal).
//
// Facts and their sources — a published `nvidia-smi -q` (JSON form, driver 396.26)
// of a Tesla P100-PCIE-16GB in Microsoft NNI's remote-machine GPU scheduler
// (src/nni_manager/training_service/remote_machine/gpuScheduler.ts):
//   - memory clock 715 MHz, the only one; max graphics clock 1328 MHz;
//   - default application clocks: graphics 1189 MHz, memory 715 MHz; under load the
//     SM runs at 1328 MHz with them (GPU Boost above the default application clock);
//   - supported graphics clocks beginning 1328, 1316, 1303 MHz (the dump elides the
//     rest): a grid of 38/3 ≈ 12.67 MHz steps rounded up to whole MHz. The rest of
//     the list is derived from that grid down to 556 MHz (62 clocks); the lowest
//     clock is not documented in any dump found;
//   - power limit default 250 W, min 125 W, max 250 W; idle board power 37 W;
//   - memory temperature: N/A.
// Pascal has neither the energy counter (nvmlDeviceGetTotalEnergyConsumption:
// Volta and newer) nor locked clocks (nvmlDeviceSetGpuLockedClocks: Volta and
// newer): clocks are chosen through application clocks.
#include <cmath>

#include "gpu/sim/specs/specs.hpp"

namespace dvfslab::sim {
namespace {

std::vector<int> p100_graphics_mhz() {
  std::vector<int> clocks;
  for (int step = 0; step <= 61; ++step)
    clocks.push_back(static_cast<int>(std::ceil(1328.0 - step * 38.0 / 3.0)));
  return clocks;
}

}  // namespace

SimGpuSpec p100_spec() {
  SimGpuSpec spec;
  spec.key = "p100";
  spec.name = "Tesla P100-PCIE-16GB";
  spec.architecture = "Pascal";
  spec.memory_mhz = {715};
  spec.graphics_mhz = {p100_graphics_mhz()};
  spec.default_graphics_mhz = 1189;
  spec.default_memory_mhz = 715;
  spec.power_limit_default_w = 250;
  spec.power_limit_min_w = 125;
  spec.power_limit_max_w = 250;
  spec.has_energy_counter = false;
  spec.has_locked_clocks = false;
  spec.has_memory_locked_clocks = false;
  spec.has_memory_temperature = false;

  // Model parameters, calibrated by bench/sim_calibration against the published
  // P100 power-limit sweeps (data/published/p100-dnn-power-limit.csv: draw at 250 W
  // median 120 W; at a 125 W limit power 0.815 of the 250 W draw and time 1.06×,
  // the energy optimum for the median workload; capped draw 0.89–0.91 of the
  // limit). No published P100 core-clock sweep exists, so the V–f shape and the
  // slow-clock stretch are the V100's at the same fractions of the top clock.
  spec.idle_power_w = 37;
  spec.static_power_w = 30;
  spec.memory_power_w_per_mhz = 0.042;     // ≈30 W of HBM2 power at 715 MHz, full activity
  spec.dynamic_power_coefficient = 0.095;  // median simulated draw at 1328 MHz ≈140 W
  spec.voltage_min_v = 0.76;
  spec.voltage_max_v = 1.0;
  spec.voltage_knee_mhz = 800;
  spec.voltage_curve_exponent = 1.5;
  spec.slow_clock_below_mhz = 950;
  spec.slow_clock_gain = 0.6;
  spec.per_cycle_power_share = 0.2;
  spec.power_limit_headroom = 0.09;  // capped draw 0.91 of the limit (real median 0.89–0.91)
  spec.calibration =
      "the published P100 power-limit sweep (data/published/p100-dnn-power-limit.csv); its "
      "core-clock shape is the V100's";
  spec.sensor_period_s = 0.1;
  spec.average_power_window_s = 0.1;
  spec.ambient_temperature_c = 30;
  spec.thermal_resistance_c_per_w = 0.18;
  spec.thermal_time_constant_s = 25;
  spec.memory_temperature_offset_c = 0;
  spec.compute_speed_vs_v100 = 0.66;  // FP32 9.3 TFLOPS against 14 (PCIe datasheets)
  spec.memory_speed_vs_v100 = 0.81;   // 732 GB/s against 900 GB/s
  spec.half_precision_speedup = 1.6;  // packed FP16, no tensor cores
  spec.tf32_speedup = 1.0;
  return spec;
}

}  // namespace dvfslab::sim
