#pragma once
// Command names checked before CLI11 parses: for a word that is not a command,
// CLI11 says only "A subcommand is required", which names neither the word nor the
// commands there are, nor how to get one this build left out.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace dvfslab::cli {

// Throws UsageError for the first command word in `args` (argv without the program
// name) that names no command of `app` (or of the command it is given to).
void check_command_names(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace dvfslab::cli
