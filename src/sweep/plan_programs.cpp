// Finds each command case's program before a sweep starts, so a typo in a plan is a
// plan error with its place, not a failure at the first point after the GPU changed.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "dvfslab/error.hpp"
#include "dvfslab/plan.hpp"

namespace dvfslab {
namespace {

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// The program as posix_spawnp finds it: a name with a slash is a path; any other is
// looked up in each PATH directory (an empty entry is the current directory).
bool findable(const std::string& program) {
  if (program.find('/') != std::string::npos) return executable(program);
  const char* path = std::getenv("PATH");
  const std::string_view directories = path ? path : "/usr/local/bin:/bin:/usr/bin";
  std::size_t start = 0;
  while (start <= directories.size()) {
    const std::size_t end = std::min(directories.find(':', start), directories.size());
    const std::string_view directory = directories.substr(start, end - start);
    if (executable(directory.empty() ? program : fmt::format("{}/{}", directory, program))) return true;
    start = end + 1;
  }
  return false;
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
