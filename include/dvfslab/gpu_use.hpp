#pragma once
// Which GPUs a job uses: its processes (the program dvfslab started and every
// descendant) matched against the processes each GPU's driver lists.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"

namespace dvfslab {

// `root` and every process descended from it now, root first; read from `proc`
// (/proc, or a copy of its layout in tests), so empty where `root` has ended (or on
// a system without /proc). A process whose stat cannot be read is left out.
std::vector<int> process_tree(int root, const std::filesystem::path& proc = "/proc");

struct GpuUse {
  std::vector<std::string> used;     // UUIDs of the GPUs that list any of the processes
  std::vector<std::string> unknown;  // UUIDs of the GPUs whose backend cannot list processes
};

// Which of `gpus` have a compute context of any of `process_ids` (as
// Gpu::compute_process_ids lists them), in the order of `gpus`.
GpuUse gpus_used_by(const std::vector<int>& process_ids, const std::vector<Gpu*>& gpus);

}  // namespace dvfslab
