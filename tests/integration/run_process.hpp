#pragma once
// Runs a program (usually the real dvfslab binary) with a changed environment and
// captures its stdout, stderr and exit code, for integration tests.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dvfslab::testing {

struct ProcessResult {
  int exit_code = -1;  // the exit status, or 128 + signal number when killed
  std::string out;
  std::string err;
};

// Environment changes: a value sets the variable, std::nullopt removes it; every
// other variable is inherited.
using EnvironmentChanges = std::map<std::string, std::optional<std::string>>;

// This process's environment with `changes` applied, as "NAME=value" strings.
std::vector<std::string> merged_environment(const EnvironmentChanges& changes);

// Runs `program` with `arguments` (without argv[0]) and waits for it.
ProcessResult run_process(const std::string& program, const std::vector<std::string>& arguments,
                          const EnvironmentChanges& environment = {});

// Runs the dvfslab binary built with the tests (DVFSLAB_BINARY).
ProcessResult run_dvfslab(const std::vector<std::string>& arguments, const EnvironmentChanges& environment = {});

}  // namespace dvfslab::testing
