#pragma once
// One function per subcommand; each lives in its own file under src/cli/.
#include <CLI/CLI.hpp>

namespace dvfslab::cli {

void add_analyze_command(CLI::App& app);
void add_import_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_merge_command(CLI::App& app);

}  // namespace dvfslab::cli
