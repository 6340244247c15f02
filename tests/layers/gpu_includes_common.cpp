// Compiled as part of the gpu module by the layering test: it must compile, which
// shows that the two forbidden includes fail for their layer and nothing else.
#include "dvfslab/error.hpp"
#include "gpu/sim/clock_snap.hpp"

int gpu_reads_a_common_header() { return static_cast<int>(dvfslab::ExitCode::usage); }
