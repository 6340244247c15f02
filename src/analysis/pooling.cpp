// Warnings about cases that pool separate experiments: the analysis averages every
// row of a case, so two runs that each measured the same points (two sweeps of one
// plan into one database, a table imported twice) become one case silently.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dvfslab/analysis.hpp"

namespace dvfslab {

std::vector<std::string> pooling_warnings(const Analysis& analysis) {
  std::vector<std::string> warnings;
  for (const CaseAnalysis& c : analysis.cases) {
    if (c.overlapping_runs.empty()) continue;
    warnings.push_back(fmt::format(
        "{} on {}{}: runs {} each measured the same settings, and they are pooled into one case as "
        "repetitions "
        "of one experiment; if they are different experiments (another device, noise or job), keep each in a "
        "database of its own (--db)",
        to_string(c.key.workload_case), c.key.gpu, c.key.simulated ? " (simulated)" : "",
        fmt::join(c.overlapping_runs, ", ")));
  }
  return warnings;
}

}  // namespace dvfslab
