#pragma once
// The workloads of a replayed sweep table (dvfslab/replay.hpp): one workload per
// workload key of the table, each iteration one unit of the table's work.
#include "dvfslab/gpu.hpp"
#include "dvfslab/workload.hpp"

namespace dvfslab {

// Registers one workload per workload key of `replay_gpu`'s table (a unit of work
// per iteration; it applies to that GPU only). Throws ConfigError when `replay_gpu`
// is not a replay GPU.
void add_replay_workloads(WorkloadRegistry& registry, const Gpu& replay_gpu);

}  // namespace dvfslab
