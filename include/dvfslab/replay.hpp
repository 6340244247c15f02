#pragma once
// Replay: a published sweep table (data/published/README.md) served as a GPU,
// so that a sweep, the analysis and the search run on real measurements made by
// others. The GPU's clock table and power limits are the settings present in the
// table; a workload of the table "runs" by advancing the GPU's virtual clock by the
// measured time per unit of work of the current setting, while the telemetry
// answers the measured power of that setting (docs/replay.md).
#include <memory>
#include <string>
#include <string_view>

#include "dvfslab/gpu.hpp"
#include "dvfslab/workload.hpp"

namespace dvfslab {

// Opens "FILE.csv" (a table of one GPU) or "FILE.csv#GPU NAME" (one GPU of a table
// of several): the text after "replay:" in a --device spec. Throws ConfigError for
// an unreadable table or an unknown GPU name, listing the GPUs in the file.
std::unique_ptr<Gpu> open_replay_gpu(std::string_view spec);

bool is_replay_gpu(const Gpu& gpu);

// Whether `replay_gpu`'s table holds a measurement of `workload` at `setting` (the
// knobs a setting leaves alone at the table's default), so a sweep can refuse a
// plan before measuring anything. Throws ConfigError when it is not a replay GPU.
bool replay_holds(const Gpu& replay_gpu, const std::string& workload, const Setting& setting);

// Registers one workload per workload key of `replay_gpu`'s table (a unit of work
// per iteration; it applies to that GPU only). Throws ConfigError when `replay_gpu`
// is not a replay GPU.
void add_replay_workloads(WorkloadRegistry& registry, const Gpu& replay_gpu);

}  // namespace dvfslab
