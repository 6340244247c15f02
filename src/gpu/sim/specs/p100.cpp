// NVIDIA Tesla P100-PCIE-16GB (Pascal).
//
// Facts and their sources:
//   - memory clock 715 MHz (HBM2), the only one; base clock 1190 MHz and boost
//     clock 1329 MHz (NVIDIA Tesla P100 PCIe specifications as tabulated by
//     GPU databases), which NVML lists as 1189 and 1328 MHz;
//   - default application clocks: graphics 1189 MHz (the base clock), memory 715 MHz;
//   - graphics clocks: 1328 MHz down to 556 MHz in steps of 38/3 ≈ 12.67 MHz,
//     rounded up to whole MHz (1328, 1316, 1303, 1290, ..., 1189, ...), 62 clocks.
//     Derived from the documented top and base clocks, which both lie on this
//     grid, not copied from a published SUPPORTED_CLOCKS dump;
//   - power limit: default and max 250 W (board power), min 125 W, the lowest limit
//     in the Zeus P100 power-limit traces (../shared/data/dvfs/p100-dnn-power-limit.csv);
//   - Pascal has neither the energy counter (nvmlDeviceGetTotalEnergyConsumption:
//     Volta and newer) nor locked clocks (nvmlDeviceSetGpuLockedClocks: Volta and
//     newer): clocks are chosen through application clocks.
#include <cmath>

#include "gpu/sim/specs/specs.hpp"

namespace dvfslab::sim {
namespace {

std::vector<int> p100_graphics_mhz() {
  std::vector<int> clocks;
  for (int step = 0; step <= 61; ++step) clocks.push_back(static_cast<int>(std::ceil(1328.0 - step * 38.0 / 3.0)));
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

  // Model parameters (docs/simulation.md explains each choice).
  spec.idle_power_w = 30;
  spec.static_power_w = 45;
  spec.memory_power_w_per_mhz = 0.042;      // ≈30 W of HBM2 power at 715 MHz, full activity
  spec.dynamic_power_coefficient = 0.135;   // ≈180 W of core power at 1328 MHz, 1.0 V, full activity
  spec.voltage_min_v = 0.80;
  spec.voltage_max_v = 1.0;
  spec.voltage_knee_mhz = 850;
  spec.sensor_period_s = 0.1;
  spec.average_power_window_s = 0.1;
  spec.ambient_temperature_c = 30;
  spec.thermal_resistance_c_per_w = 0.18;
  spec.thermal_time_constant_s = 25;
  spec.memory_temperature_offset_c = 0;
  spec.compute_speed_vs_v100 = 0.66;        // FP32 9.3 TFLOPS against 14 (PCIe datasheets)
  spec.memory_speed_vs_v100 = 0.81;         // 732 GB/s against 900 GB/s
  spec.half_precision_speedup = 1.6;        // packed FP16, no tensor cores
  spec.tf32_speedup = 1.0;
  return spec;
}

}  // namespace dvfslab::sim
