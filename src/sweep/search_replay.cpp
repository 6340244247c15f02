// The replayed adaptive search (see search_replay.hpp).
#include "sweep/search_replay.hpp"

namespace dvfslab::search_detail {

ReplayStrategy::ReplayStrategy(const StrategyOptions& options, const EvidenceSettings& evidence)
    : options_(options), evidence_(evidence) {}

std::vector<ScheduledPoint> ReplayStrategy::propose(const SearchSpace& space,
                                                    std::span<const PointOutcome> measured) {
  const KnobGrid grid(space.settings);
  budget_spent_ = false;
  for (std::size_t index = 0; index < space.cases.size(); ++index) {
    // A shard searches every count-th case.
    if (static_cast<int>(index % static_cast<std::size_t>(space.shard.count)) != space.shard.index) continue;
    const Case& workload_case = space.cases[index];
    CaseEvidence evidence(workload_case, measured, options_.objective, space.policy, options_, evidence_);
    try {
      // The baseline comes first: the objective and the saving are relative to it.
      evidence.look(Setting{});
      if (!grid.empty()) search(evidence, grid);
    } catch (const ProbeNeeded& probe) {
      // One case at a time, so that its workload stays prepared. The baseline is
      // measured under the plan's stop rule (every saving is relative to it, and its
      // repetitions give the case's noise); any other setting one window per
      // proposal, proposed again while a comparison needs more.
      const int windows = probe.setting.is_default() ? 0 : 1;
      return {ScheduledPoint{workload_case, probe.setting, PointRole::grid, 0, windows}};
    } catch (const BudgetSpent&) {
      budget_spent_ = true;
    }
  }
  return {};
}

}  // namespace dvfslab::search_detail

namespace dvfslab {

std::optional<Setting> best_measured_setting(const Case& workload_case,
                                             std::span<const PointOutcome> measured,
                                             const StrategyOptions& options) {
  const search_detail::CaseEvidence evidence(workload_case, measured, options.objective, MeasurePolicy{},
                                             options);
  return evidence.best();
}

}  // namespace dvfslab
