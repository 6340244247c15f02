#pragma once
// The command line's edge to the environment: the DVFSLAB_* variables are read by
// the front end it shares with the Python extension (dvfslab/frontend.hpp), once,
// into the options the library takes; the library reads none.
#include "dvfslab/frontend.hpp"

namespace dvfslab::cli {

using frontend::open_options;
using frontend::read_only_from_environment;
using frontend::state_dir;

}  // namespace dvfslab::cli
