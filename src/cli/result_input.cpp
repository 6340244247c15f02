#include "cli/result_input.hpp"

#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/sweep_table.hpp"

namespace dvfslab::cli {

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

std::vector<std::filesystem::path> input_files(const std::filesystem::path& path) {
  if (path.extension() == ".csv") return {path};
  return database_files(path);
}

}  // namespace dvfslab::cli
