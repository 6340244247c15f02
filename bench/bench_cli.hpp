// What the benchmarks' command lines share: --help, and the folder of sweep tables
// (*.csv) the published-data benchmarks read, so that a folder they cannot read is
// one error line, not an abort.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "dvfslab/error.hpp"

namespace dvfslab::bench {

// The folder's *.csv files, sorted; throws ConfigError when it cannot be read or
// holds none.
inline std::vector<std::filesystem::path> sweep_tables_in(const std::filesystem::path& folder) {
  std::error_code error;
  std::filesystem::directory_iterator entries(folder, error);
  if (error)
    throw ConfigError("cannot read the folder '" + folder.string() + "' (" + error.message() +
                      "): give a folder of sweep tables, e.g. data/published");
  std::vector<std::filesystem::path> tables;
  for (const auto& entry : entries) {
    if (entry.path().extension() == ".csv") tables.push_back(entry.path());
  }
  if (tables.empty())
    throw ConfigError("no sweep tables (*.csv) in '" + folder.string() + "': give a folder such as data/published");
  std::sort(tables.begin(), tables.end());
  return tables;
}

inline bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (argument == "--help" || argument == "-h") return true;
  }
  return false;
}

}  // namespace dvfslab::bench
