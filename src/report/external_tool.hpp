#pragma once
// Running the programs that make the figure files (node, rsvg-convert): found on
// PATH, run to their end, what they say about an error kept in a log file.
#include <filesystem>
#include <string>
#include <vector>

namespace dvfslab::report_detail {

// Whether `program` is an executable file in a PATH directory (as posix_spawnp looks).
bool program_on_path(const std::string& program);

struct ToolExit {
  int code = 0;         // the exit status, or 128 + the signal that ended it
  std::string message;  // the first non-empty line of its error output, when it failed
};

// Runs `argv` (argv[0] searched on PATH) with standard input from /dev/null, its
// error output into `log_file`, and its standard output into our error output when
// `show_output` (progress lines), else into `log_file` too. Throws Error when it
// cannot be started.
ToolExit run_tool(const std::vector<std::string>& argv, const std::filesystem::path& log_file,
                  bool show_output);

}  // namespace dvfslab::report_detail
