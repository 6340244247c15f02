#pragma once
// The --iterations-from option of the commands that read a program's markers
// (measure, tune): whose iterations count when several ranks report them.
#include <CLI/CLI.hpp>

#include "dvfslab/markers.hpp"

namespace dvfslab::cli {

CLI::Option* add_iterations_from_option(CLI::App& command, IterationsFrom& from);

}  // namespace dvfslab::cli
