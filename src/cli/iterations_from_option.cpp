#include "cli/iterations_from_option.hpp"

#include <map>
#include <string>

namespace dvfslab::cli {

CLI::Option* add_iterations_from_option(CLI::App& command, IterationsFrom& from) {
  static const std::map<std::string, IterationsFrom> names{{"rank0", IterationsFrom::rank0},
                                                           {"slowest", IterationsFrom::slowest}};
  return command
      .add_option("--iterations-from", from,
                  "For a job on several GPUs whose ranks write 'rank N' on their marker lines: rank0 counts "
                  "rank 0's iterations (lines without a rank are rank 0's); slowest counts, at each point, "
                  "the fewest any rank has finished. Named windows are rank 0's either way "
                  "(docs/multi-gpu.md)")
      ->transform(CLI::CheckedTransformer(names, CLI::ignore_case))
      ->default_str("rank0");
}

}  // namespace dvfslab::cli
