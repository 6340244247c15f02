#pragma once
// Boards of one model differ: their chips leak and need voltage differently and
// sit in different places of the airflow. A simulated node gives each GPU after
// the first a deterministic variation of its own, so per-GPU figures differ as
// they do on a real node (docs/multi-gpu.md#choosing-the-gpus).
#include "dvfslab/sim_gpu.hpp"

namespace dvfslab::sim {

// The model `model` as the board at `position` (0 = first) of a simulated node
// has it. Position 0 is the model as specified, the GPU a single sim:NAME opens;
// position 1 leaks more, draws more dynamic power and cools worse, so it runs
// hotter and, under one power limit, throttles to a lower clock than position 0.
SimGpuSpec board_at_position(const SimGpuSpec& model, int position);

}  // namespace dvfslab::sim
