#include "dvfslab/frontend.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "dvfslab/error.hpp"
#include "dvfslab/replay.hpp"
#include "dvfslab/twin.hpp"

namespace dvfslab::frontend {

std::optional<TableGpu> table_gpu(const Gpu& gpu) {
  if (is_replay_gpu(gpu)) return TableGpu{"replayed table", replay_holds, replay_workload_keys};
  if (is_twin_gpu(gpu)) return TableGpu{"twin", twin_holds, twin_workload_keys};
  return std::nullopt;
}

void check_table_workload(const Gpu& gpu, const TableGpu& table, const std::string& workload) {
  const auto& keys = table.workload_keys(gpu);
  if (std::find(keys.begin(), keys.end(), workload) != keys.end()) return;
  throw ConfigError(
      fmt::format("--workload '{}': the {} of {} has no such workload key; `dvfslab info --device "
                  "{}` lists its {} keys",
                  workload, table.kind, gpu.identity().name, gpu.identity().device_spec, keys.size()));
}

}  // namespace dvfslab::frontend
