// Finds each command case's program before a sweep starts, so a typo in a plan is a
// plan error with its place, not a failure at the first point after the GPU changed.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dvfslab/command.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/plan.hpp"

namespace dvfslab {
namespace {

// The program as it will be started (program_search_paths) is an executable file.
bool findable(const std::string& program) {
  const std::vector<std::string> paths = program_search_paths(program);
  return std::any_of(paths.begin(), paths.end(),
                     [](const std::string& path) { return ::access(path.c_str(), X_OK) == 0; });
}

}  // namespace

void check_plan_programs(const Plan& plan) {
  for (const CommandSpec& command : plan_commands(plan)) {
    const std::string& program = command.argv.front();
    if (program.empty() || !findable(program)) {
      throw ConfigError(command.where,
                        fmt::format("the program '{}' of command case '{}' is not found or not "
                                    "executable: check the name, or give its path (PATH is searched, "
                                    "no shell runs it)",
                                    program, command.name));
    }
  }
}

}  // namespace dvfslab
