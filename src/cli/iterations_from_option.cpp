#include "cli/iterations_from_option.hpp"

#include <string>

namespace dvfslab::cli {

CLI::Option* add_iterations_from_option(CLI::App& command, IterationsFrom& from) {
  return command
      .add_option_function<std::string>(
          "--iterations-from",
          [&from](const std::string& name) {
            from = name == "slowest" ? IterationsFrom::slowest : IterationsFrom::rank0;
          },
          "For a job on several GPUs whose ranks write 'rank N' on their marker lines: rank0 counts rank 0's "
          "iterations (lines without a rank are rank 0's); slowest counts, at each point, the fewest any "
          "rank "
          "has finished. Named windows are rank 0's either way (docs/multi-gpu.md)")
      ->check(CLI::IsMember({"rank0", "slowest"}))
      ->default_str("rank0");
}

}  // namespace dvfslab::cli
