#pragma once
// Runs a program (usually the real dvfslab binary) with a changed environment and
// captures its stdout, stderr and exit code, for integration tests.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dvfslab::testing {

struct ProcessResult {
  int exit_code = -1;  // the exit status, or 128 + signal number when killed
  std::string out;
  std::string err;
  bool timed_out = false;  // killed (with its process group) after the time limit
};

// Environment changes: a value sets the variable, std::nullopt removes it; every
// other variable is inherited.
using EnvironmentChanges = std::map<std::string, std::optional<std::string>>;

// This process's environment with `changes` applied, as "NAME=value" strings.
std::vector<std::string> merged_environment(const EnvironmentChanges& changes);

// Runs `program` with `arguments` (without argv[0]) and waits for it.
ProcessResult run_process(const std::string& program, const std::vector<std::string>& arguments,
                          const EnvironmentChanges& environment = {});

// Like run_process, but the program runs in its own process group with standard
// input from /dev/null, and the whole group is killed with SIGKILL when it outlives
// `limit` (then `timed_out` is set and exit_code is 128 + SIGKILL).
ProcessResult run_process_with_limit(const std::string& program, const std::vector<std::string>& arguments,
                                     const EnvironmentChanges& environment, std::chrono::milliseconds limit);

// Runs the dvfslab binary built with the tests (DVFSLAB_BINARY).
ProcessResult run_dvfslab(const std::vector<std::string>& arguments,
                          const EnvironmentChanges& environment = {});

}  // namespace dvfslab::testing
