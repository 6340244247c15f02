#pragma once
// A strategy driven through its seam (propose, measure, report back) on a noiseless
// objective, one window a proposal unless the point asks for more: what the unit
// tests of auto's line searches need to see which settings it measured and where it
// ended.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "dvfslab/strategy.hpp"

namespace dvfslab::testing {

struct NoiselessSearch {
  std::map<Setting, int> windows;  // per setting measured, the default included
  std::optional<Setting> best;     // best_measured_setting of the outcomes
};

inline NoiselessSearch search_noiseless(SearchStrategy& strategy, const Case& workload_case,
                                        const std::vector<Setting>& settings, const StrategyOptions& options,
                                        const std::function<double(const Setting&)>& energy_of) {
  SearchSpace space;
  space.cases = {workload_case};
  space.settings = settings;
  space.policy.repetitions = 1;
  space.policy.max_repetitions = 1;
  std::vector<PointOutcome> outcomes;
  std::map<Setting, std::vector<double>> series;
  NoiselessSearch searched;
  for (auto batch = strategy.propose(space, outcomes); !batch.empty() && outcomes.size() < 500;
       batch = strategy.propose(space, outcomes)) {
    for (const ScheduledPoint& point : batch) {
      PointOutcome outcome;
      outcome.point = point;
      auto& values = series[point.setting];
      do {
        values.push_back(energy_of(point.setting));
        ++outcome.repetitions;
        ++searched.windows[point.setting];
      } while (outcome.repetitions < std::max(point.windows, 1));
      outcome.energy_per_item_j = values.back();
      outcome.energy_per_item_j_series = values;
      outcome.items_per_s = 1.0;
      outcome.items_per_s_series = std::vector<double>(values.size(), 1.0);
      outcome.mean_power_w = values.back();
      outcomes.push_back(outcome);
    }
  }
  searched.best = best_measured_setting(workload_case, outcomes, options);
  return searched;
}

}  // namespace dvfslab::testing
