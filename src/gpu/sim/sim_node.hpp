#pragma once
// The simulated GPUs of one node: sim:NAME, sim:NAMExN and lists of them
// ("h200x2,v100"), on one shared clock.
#include <memory>
#include <string_view>
#include <vector>

#include "dvfslab/gpu.hpp"

namespace dvfslab::sim {

// The most simulated GPUs one --device spec opens.
constexpr int kMaxSimulatedGpus = 64;

// Opens the GPUs `names` lists (the text after "sim:" of each item of a --device
// spec, joined by commas): NAME is one GPU, NAMExN N of that model. They share
// one clock, are numbered 0, 1, ... in order (index and UUID) and vary by
// position (board_variation.hpp). Throws UsageError for an empty item or a count
// outside 1..kMaxSimulatedGpus and ConfigError for an unknown model.
std::vector<std::unique_ptr<Gpu>> open_simulated_node(std::string_view names, SimTimeMode mode);

}  // namespace dvfslab::sim
