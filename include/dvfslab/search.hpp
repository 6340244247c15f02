#pragma once
// A search: the optimum of a plan's cases found by a named strategy
// (dvfslab/strategy.hpp) in a few probes instead of the whole grid, run by
// run_sweep like any sweep (guard, journal, store, resume). `dvfslab search` and
// `sweep --strategy` wrap the named strategy in a SearchSession, which holds it to
// what the command line promises whatever the strategy: the settings a replayed
// table holds, and a hard stop at the budget (docs/search.md).
//
//   SearchSession session(make_strategy("golden", options), limits, gpu.clock());
//   SweepResult result = run_sweep(gpu, plan, registry, store, sweep_options, progress, session);
//   std::vector<Probe> probes = probes_in_order(session.outcomes());
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/clock.hpp"
#include "dvfslab/strategy.hpp"

namespace dvfslab {

// ---------------------------------------------------------------- the run's strategy

// A search records its strategy as the first line of its stored plan text
// ("# dvfslab strategy: golden"), so the plan hash, --resume and merge tell runs of
// different strategies apart and `report` can show a search's probes. A plain
// sweep (the grid) records none: sweep and study add it only for another strategy.
// A search for another objective than energy records it on the next line
// ("# dvfslab objective: edp"), so that runs searched for energy keep the plan hash
// they had before objectives were recorded.
std::string plan_text_with_strategy(std::string_view plan_text, std::string_view strategy,
                                    std::string_view objective = "energy");
// The strategy a stored plan text records; absent for a plain sweep.
std::optional<std::string> strategy_of_plan_text(std::string_view plan_text);
// The objective a searched run optimised ("energy" where none is recorded); absent
// for a plain sweep, which measured every setting whatever the objective.
std::optional<std::string> objective_of_plan_text(std::string_view plan_text);

// ---------------------------------------------------------------- the session

struct SearchLimits {
  // Distinct settings measured per run, the default setting included.
  std::optional<int> budget_points;
  // GPU seconds (on the GPU's clock) after which no further point is started.
  std::optional<double> budget_seconds;
  // Settings a probe may use, per case (a replayed table holds only some); all when empty.
  std::function<bool(const Case&, const Setting&)> allowed;
};

class SearchSession final : public SearchStrategy {
 public:
  SearchSession(std::unique_ptr<SearchStrategy> inner, SearchLimits limits, const Clock& clock);

  std::string name() const override { return inner_->name(); }
  // The inner strategy's points one at a time, until it is done or a budget is
  // spent (a point already measured is always allowed). The inner strategy is
  // offered only the allowed settings and sees every outcome.
  std::vector<ScheduledPoint> propose(const SearchSpace& space,
                                      std::span<const PointOutcome> measured) override;

  // Every outcome of the run so far, in measuring order.
  const std::vector<PointOutcome>& outcomes() const { return outcomes_; }
  // Whether a budget stopped the search before the strategy was done: the
  // session's hard stop, or the strategy planning within the budget.
  bool stopped_by_budget() const override;

 private:
  SearchSpace allowed_space(const SearchSpace& space) const;
  bool within_budget(const ScheduledPoint& next) const;

  std::unique_ptr<SearchStrategy> inner_;
  SearchLimits limits_;
  const Clock& clock_;
  std::optional<double> started_at_;
  std::vector<PointOutcome> outcomes_;
  std::vector<ScheduledPoint> queued_;
  bool stopped_by_budget_ = false;
};

// ---------------------------------------------------------------- what it found

// One distinct setting measured, in the order first measured.
struct Probe {
  Case workload_case;
  Setting setting;
  int order = 0;                 // 1 for the first probe
  int repetitions = 0;           // every repetition held (stored ones of a resume too)
  double energy_per_item_j = 0;  // their mean
  MeasurementFlags flags;        // any repetition's; setting_not_applied() rules it out
};
std::vector<Probe> probes_in_order(std::span<const PointOutcome> outcomes);

// The probability that the optimum's true objective value is within `tolerance_pct`
// of every other probed point's, from the repetitions: a normal approximation per
// pair, multiplied over the pairs (docs/search.md). A point measured once borrows
// the pooled relative spread of the points measured more often; absent when no
// point of the case was measured twice or the case has no optimum.
std::optional<double> optimum_confidence(const CaseAnalysis& analysis, const Objective& objective,
                                         double tolerance_pct = 1.0);

}  // namespace dvfslab
