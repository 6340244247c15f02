#pragma once
// Where analyze and report read their rows from: a dvfslab database or, as a
// convenience, a sweep-table CSV file.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/frontend.hpp"
#include "dvfslab/results.hpp"

namespace dvfslab::cli {

// Shared with the Python extension's analyze().
using frontend::load_result_rows;

// A searched run measured only the settings its own objective needed, so analysed
// for another objective its optimum may be a setting it never measured: the
// warning (one line) naming such runs of the database `path`; none for a sweep
// table or when every searched run optimised `objective`.
std::optional<std::string> searched_objective_warning(const std::filesystem::path& path,
                                                      const Objective& objective);

// The files load_result_rows(path) reads, which no output may overwrite.
std::vector<std::filesystem::path> input_files(const std::filesystem::path& path);

}  // namespace dvfslab::cli
