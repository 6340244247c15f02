#pragma once
// One function per simulated GPU model; each lives in its own file with the
// sources of its facts.
#include <vector>

#include "dvfslab/sim_gpu.hpp"

namespace dvfslab::sim {

SimGpuSpec h200_spec();
SimGpuSpec a100_spec();
SimGpuSpec v100_spec();
SimGpuSpec v100sxm2_spec();
SimGpuSpec p100_spec();
SimGpuSpec rtx2080ti_spec();
SimGpuSpec mi250x_spec();
SimGpuSpec mi300x_spec();

// Clocks from `highest_mhz` down to `lowest_mhz` in steps of `step_tenths_mhz`/10
// MHz, each rounded down to a whole MHz the way NVML lists them (a 7.5 MHz step
// gives 1380, 1372, 1365, ...).
std::vector<int> clocks_by_step(int highest_mhz, int lowest_mhz, int step_tenths_mhz);

}  // namespace dvfslab::sim
