#pragma once
// Which of NVML's GPUs a job was given, as CUDA_VISIBLE_DEVICES or
// NVIDIA_VISIBLE_DEVICES list them: by UUID or PCI bus id, and a CUDA index by
// the GPU's place in PCI bus order, never by NVML's index
// (docs/multi-gpu.md#choosing-the-gpus).
#include <cstddef>
#include <optional>
#include <vector>

#include "dvfslab/gpu.hpp"

namespace dvfslab::nvml {

// The positions in `gpus` (NVML's enumeration) of the GPUs `visible` lists, in the
// list's order, or nullopt when the variable restricts nothing here
// (NVIDIA_VISIBLE_DEVICES=all, none or void, or indices: the container runtime
// has applied those already, so NVML sees only the given GPUs). Following CUDA, a
// negative index ends the list. Throws ConfigError, naming the variable and this
// node's GPUs, for an entry that names no GPU or several, a GPU listed twice, a
// MIG instance, a list that leaves no GPU, and CUDA indices on a node of several
// GPU models without CUDA_DEVICE_ORDER=PCI_BUS_ID (CUDA then counts fastest first).
std::optional<std::vector<std::size_t>> visible_gpu_positions(const VisibleDevices& visible,
                                                              const std::vector<GpuIdentity>& gpus);

}  // namespace dvfslab::nvml
