#pragma once
// One function per subcommand; each lives in its own file under src/cli/.
#include <CLI/CLI.hpp>

namespace dvfslab::cli {


}  // namespace dvfslab::cli
