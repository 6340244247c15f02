#pragma once
// Starting a program directly (no shell) with fork and exec, so that the child can
// set itself up before exec as a workload needs (a process group of its own, death
// with dvfslab), with exec errors reported synchronously as posix_spawnp does.
#include <sys/types.h>

#include <string>
#include <vector>

namespace dvfslab::command_detail {

struct SpawnRequest {
  std::vector<std::string> argv;         // argv[0] is searched on PATH as posix_spawnp does
  std::vector<std::string> environment;  // the program's whole environment
  int inherited_fd = -1;                 // a close-on-exec descriptor the program keeps open
  bool stdout_to_stderr = false;
  // The program gets a process group of its own (its group id is its pid) and
  // standard input from /dev/null, and the kernel sends it SIGKILL when the thread
  // that spawned it ends (PR_SET_PDEATHSIG), e.g. when dvfslab is killed with -9.
  bool own_process_group_dying_with_parent = false;
};

// Starts the program and returns its pid once it runs; throws CommandStartError
// (exit code 127 when not found, 126 when it cannot be executed).
pid_t spawn(const SpawnRequest& request);

}  // namespace dvfslab::command_detail
