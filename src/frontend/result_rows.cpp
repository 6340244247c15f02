// Result rows from a database or a sweep table, as `dvfslab analyze` and Python's
// analyze() read their input.
#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "dvfslab/frontend.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/sweep_table.hpp"

namespace dvfslab::frontend {

std::vector<ResultRow> load_result_rows(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) {
    throw ConfigError(
        fmt::format("'{}' does not exist: give a dvfslab database (from `dvfslab sweep` or "
                    "`dvfslab import`) or a sweep-table CSV file",
                    path.string()));
  }
  if (path.extension() == ".csv") return read_sweep_table(path);
  return Store::open_existing(path).result_rows();
}

}  // namespace dvfslab::frontend
