#pragma once
// GPUs answered from a sweep table (replay: and twin:) hold only the table's
// settings and workloads; commands that choose settings ask here, whatever the backend.
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab::cli {

struct TableGpu {
  std::string kind;  // "replayed table", "twin"
  bool (*holds)(const Gpu& gpu, const std::string& workload, const Setting& setting);
  const std::vector<std::string>& (*workload_keys)(const Gpu& gpu);
};

// nullopt for a GPU that is not backed by a table.
std::optional<TableGpu> table_gpu(const Gpu& gpu);

// Throws ConfigError when the table has no workload `workload`.
void check_table_workload(const Gpu& gpu, const TableGpu& table, const std::string& workload);

}  // namespace dvfslab::cli
