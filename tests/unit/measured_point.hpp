#pragma once
// A grid point of a case as the runner hands it to a search strategy, for the search
// evidence's unit tests: the windows' energies per item, one item per second each.
#include <vector>

#include "dvfslab/strategy.hpp"

namespace dvfslab::testing {

inline PointOutcome measured_point(const Case& workload_case, const Setting& setting,
                                   const std::vector<double>& energy_per_item_j) {
  PointOutcome outcome;
  outcome.point = ScheduledPoint{workload_case, setting, PointRole::grid, 0, 1};
  outcome.repetitions = static_cast<int>(energy_per_item_j.size());
  outcome.energy_per_item_j_series = energy_per_item_j;
  outcome.energy_per_item_j = energy_per_item_j.back();
  outcome.items_per_s = 1.0;
  outcome.items_per_s_series = std::vector<double>(energy_per_item_j.size(), 1.0);
  return outcome;
}

}  // namespace dvfslab::testing
