#pragma once
// Where analyze and report read their rows from: a dvfslab database or, as a
// convenience, a sweep-table CSV file.
#include <filesystem>
#include <vector>

#include "dvfslab/results.hpp"

namespace dvfslab::cli {

// Reads every measurement row of `path`; throws ConfigError when it does not exist.
std::vector<ResultRow> load_result_rows(const std::filesystem::path& path);

}  // namespace dvfslab::cli
