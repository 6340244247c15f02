#pragma once
// Where analyze and report read their rows from: a dvfslab database or, as a
// convenience, a sweep-table CSV file.
#include <filesystem>
#include <vector>

#include "dvfslab/results.hpp"

namespace dvfslab::cli {

// Reads every measurement row of `path`; throws ConfigError when it does not exist.
std::vector<ResultRow> load_result_rows(const std::filesystem::path& path);

// The files load_result_rows(path) reads, which no output may overwrite.
std::vector<std::filesystem::path> input_files(const std::filesystem::path& path);

}  // namespace dvfslab::cli
