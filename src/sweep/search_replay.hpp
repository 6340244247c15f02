#pragma once
// The base of the adaptive strategies: per case, the baseline first, then the
// strategy's search replayed from the start over what was measured (see
// search_evidence.hpp); the first setting the replay lacks is the next probe.
#include <string>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/strategy.hpp"
#include "sweep/search_evidence.hpp"

namespace dvfslab::search_detail {

class ReplayStrategy : public SearchStrategy {
 public:
  explicit ReplayStrategy(const StrategyOptions& options, const EvidenceSettings& evidence = {});

  std::vector<ScheduledPoint> propose(const SearchSpace& space, std::span<const PointOutcome> measured) final;
  bool stopped_by_budget() const final { return budget_spent_; }

 protected:
  // Searches one case; returns when done, or throws ProbeNeeded / BudgetSpent.
  virtual void search(CaseEvidence& evidence, const KnobGrid& grid) const = 0;

 private:
  StrategyOptions options_;
  EvidenceSettings evidence_;
  bool budget_spent_ = false;  // in the last replay, for any case
};

}  // namespace dvfslab::search_detail
