#pragma once
// What the simulated AMD Instinct boards (sim:mi250x, sim:mi300x) share: AMD
// publishes a board's clocks and power, the rest is the simulator's choice and the
// same for every board (docs/simulation.md).
#include <string>

#include "dvfslab/sim_gpu.hpp"

namespace dvfslab::sim {

// The data-sheet facts the shared part derives a board's clocks and power caps from.
struct AmdInstinctBoard {
  std::string key;           // "mi300x"
  std::string model;         // "MI300X", named "AMD Instinct MI300X"
  std::string architecture;  // "CDNA 3"
  int peak_engine_mhz = 0;
  int memory_mhz = 0;
  double board_power_w = 0;  // typical board power: the default and highest power cap
};

// `board`'s spec with what every Instinct board shares; the caller adds the model
// parameters that scale with the board's power and clocks, and its speed.
SimGpuSpec amd_instinct_spec(const AmdInstinctBoard& board);

}  // namespace dvfslab::sim
