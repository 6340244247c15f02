#pragma once
// The command line's sweep progress: on stderr, a bar on a terminal, lines
// otherwise; and the edge where the crash test hook is read from the environment.
#include <memory>

#include "dvfslab/sweep.hpp"

namespace dvfslab::cli {

// With DVFSLAB_TEST_KILL_AFTER_POINTS=N set, the process sends itself SIGKILL after
// its N-th measured point, so tests can crash a sweep at an exact place. `budget`:
// a search's, which its progress shows.
std::unique_ptr<ProgressReporter> make_stderr_progress_reporter(SearchProgressBudget budget = {});

}  // namespace dvfslab::cli
