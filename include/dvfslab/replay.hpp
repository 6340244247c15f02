#pragma once
// Replay: a published sweep table (data/published/README.md) served as a GPU,
// so that a sweep, the analysis and the search run on real measurements made by
// others. The GPU's clock table and power limits are the settings present in the
// table; a workload of the table "runs" by advancing the GPU's virtual clock by the
// measured time per unit of work of the current setting, while the telemetry
// answers the measured power of that setting (docs/replay.md).
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dvfslab/gpu.hpp"

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

// The workload keys of `replay_gpu`'s table, in table order, and where the table
// comes from ("FILE.csv (SOURCE)"). Throw ConfigError when it is not a replay GPU.
const std::vector<std::string>& replay_workload_keys(const Gpu& replay_gpu);
std::string replay_table_origin(const Gpu& replay_gpu);

// The setting `workload` runs at with nothing applied, where it is not the GPU's
// default (the table has no row of it there): its row marked default, else its
// highest setting. nullopt where it runs at the GPU's default.
std::optional<Setting> replay_own_baseline(const Gpu& replay_gpu, const std::string& workload);

// The baseline of `workload` where the table marks none of its rows default (its
// highest setting, or the GPU's default where it has a row there): nullopt where a
// row is marked, so the caller can say which baseline a rule chose.
std::optional<Setting> replay_unmarked_baseline(const Gpu& replay_gpu, const std::string& workload);

// "Runs" `units` units of `workload`'s work at the current setting: advances the
// virtual clock by the measured time. Throws ConfigError when it is not a replay GPU.
void run_replayed_work(Gpu& replay_gpu, const std::string& workload, double units);

}  // namespace dvfslab
