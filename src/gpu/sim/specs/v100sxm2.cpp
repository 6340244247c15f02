// NVIDIA Tesla V100 SXM2 16 GB (Volta): the board of the dense published core-clock
// set (data/published/v100sxm2-sycl-microbench-core.csv, 140 clocks 487–1530 MHz).
//
// Facts and their sources (a published `nvidia-smi -q` of eight Tesla
// V100-SXM2-16GB boards, driver 550):
//   - memory clock 877 MHz, the only one (HBM2, as the PCIe board);
//   - graphics clocks 1530 MHz ("Max Clocks") down to 135 MHz (the idle clock it
//     reads) on NVML's 7.5 MHz grid rounded down, 187 clocks; every clock of the
//     dense set (1530, 1522, 1515, ... 487) lies on it;
//   - default application clocks: graphics 1312 MHz, memory 877 MHz;
//   - power limit: default and max 300 W, min 150 W;
//   - idle board power 39–45 W across the eight boards.
//
// The model's constants are the PCIe V100's (v100.cpp), the same GV100 chip, whose
// voltage at a given clock is the chip's, not the board's: the curve keeps its knee
// at 850 MHz and its shape, and goes on rising past the PCIe board's 1380 MHz top to
// this board's 1530 MHz (so voltage_max_v is the PCIe curve continued there). The
// slow-clock stretch starts at the same 1000 MHz. None of them was set from an SXM2
// measurement, so the dense SXM2 set checks them as a family left out of the
// calibration (docs/simulation.md#calibration).
#include "gpu/sim/specs/specs.hpp"

namespace dvfslab::sim {

SimGpuSpec v100sxm2_spec() {
  SimGpuSpec spec = v100_spec();
  spec.key = "v100sxm2";
  spec.name = "Tesla V100-SXM2-16GB";
  spec.graphics_mhz = {clocks_by_step(1530, 135, 75)};
  spec.voltage_max_v = continued_voltage_v(v100_spec(), 1530);
  spec.default_graphics_mhz = 1312;
  spec.power_limit_default_w = 300;
  spec.power_limit_min_w = 150;
  spec.power_limit_max_w = 300;
  spec.idle_power_w = 42;
  spec.calibration =
      "none of its own: the PCIe V100's constants (calibrated on v100-kernels-core.csv and "
      "v100-dnn-power-limit.csv); checked against the dense SXM2 set "
      "(v100sxm2-sycl-microbench-core.csv), a family left out of that calibration";
  return spec;
}

}  // namespace dvfslab::sim
