// What the benchmarks' command lines share: --help, and the folder of sweep tables
// (*.csv) the published-data benchmarks read, so that a folder they cannot read is
// one error line, not an abort.
#pragma once

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
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
    throw ConfigError("no sweep tables (*.csv) in '" + folder.string() +
                      "': give a folder such as data/published");
  std::sort(tables.begin(), tables.end());
  return tables;
}

// The exit status when the command line asks for --help (the usage on stdout, 0) or
// has fewer than `fewest` or more than `most` arguments (the usage on stderr, 2); none
// when the benchmark should run.
inline std::optional<int> usage_exit(int argc, char** argv, const char* usage, int fewest, int most) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (argument == "--help" || argument == "-h") {
      std::fputs(usage, stdout);
      return 0;
    }
  }
  if (argc - 1 < fewest || argc - 1 > most) {
    std::fputs(usage, stderr);
    return 2;
  }
  return std::nullopt;
}

}  // namespace dvfslab::bench
