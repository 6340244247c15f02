#pragma once
// `dvfslab daemon` (src/cli/daemon.cpp). Declared apart from commands.hpp, which
// every command includes, so that adding it rebuilt no other command.
#include <CLI/CLI.hpp>

namespace dvfslab::cli {

void add_daemon_command(CLI::App& app);

}  // namespace dvfslab::cli
