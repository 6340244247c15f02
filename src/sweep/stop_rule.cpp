#include <algorithm>
#include <cmath>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/sweep.hpp"

namespace dvfslab {

bool needs_another_repetition(const MeasurePolicy& policy, std::span<const double> energy_per_item_j) {
  const int done = static_cast<int>(energy_per_item_j.size());
  if (done < policy.repetitions) return true;
  if (done >= policy.max_repetitions || !policy.ci_target_pct) return false;
  if (done < 2) return true;
  const Estimate energy = estimate(std::vector<double>(energy_per_item_j.begin(), energy_per_item_j.end()));
  if (!energy.ci95_half_width || energy.mean <= 0) return false;
  return 100.0 * *energy.ci95_half_width / energy.mean > *policy.ci_target_pct;
}

}  // namespace dvfslab
