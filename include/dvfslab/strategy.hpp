#pragma once
// The strategy seam of a sweep: a SearchStrategy decides which points to measure,
// from what was measured so far; the runner measures each point it proposes
// (apply the setting through the ClockGuard, settle, warm up, measure repetitions
// until the stop rule is met, store every window) and reports the outcome back.
//
// The plan's grid is one strategy (make_grid_strategy). A custom one plugs in with
// run_sweep(..., strategy) without touching the runner; examples/custom_strategy/
// shows a coarse-to-fine search.
//
//   class MyStrategy : public SearchStrategy {
//     std::string name() const override { return "mine"; }
//     std::vector<ScheduledPoint> propose(const SearchSpace& space,
//                                         std::span<const PointOutcome> measured) override;
//   };
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/clock_map.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab {

// What one point gave: its repetitions' energy per item and throughput, and the last
// window's figures. Strategies read it to choose what comes next; progress reports
// print it.
struct PointOutcome {
  ScheduledPoint point;
  int repetitions = 0;                           // measured now (0: skipped, already in the store)
  std::vector<double> energy_per_item_j_series;  // every repetition of the point in this run, stored ones too
  std::optional<double> energy_per_item_j;       // the last window's
  std::optional<double> items_per_s;             // the last window's
  std::vector<double> items_per_s_series;        // every repetition in this run, stored ones too
  std::optional<double> mean_power_w;            // the last window's (a stored point: its windows' mean)
  // The SM and memory clocks the GPU ran at, as mean_power_w; absent where none were
  // read (a replayed table) or the job ran on several GPUs. Settings that ran at the
  // same clocks are one operating point.
  std::optional<double> sm_mhz_mean, mem_mhz_mean;
  std::string item_unit;
  MeasurementFlags flags;  // any repetition's
};

// Where a strategy may search: the plan's cases and the settings its knobs name on
// this GPU (ascending, the default setting not included), with the plan's policy.
struct SearchSpace {
  std::vector<Case> cases;
  std::vector<Setting> settings;
  MeasurePolicy policy;
  Shard shard;
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  virtual std::string name() const = 0;
  // The next points to measure, in order, given every outcome of this run so far
  // (in measuring order); empty when the search is done. Called again after the
  // returned points were measured. The runner numbers the points (sequence) in the
  // order measured; a point's role says whether it is a grid point (repeated under
  // the stop rule) or a drift check (measured once). A grid point proposed again in
  // the same run is measured again (at least one more window), and its outcome's
  // series holds all of its windows; a resumed run hands back a point it stored, on
  // its first proposal, without measuring it.
  virtual std::vector<ScheduledPoint> propose(const SearchSpace& space,
                                              std::span<const PointOutcome> measured) = 0;
  // The points it will measure when known up front (for progress and dry runs);
  // empty for an adaptive search.
  virtual Schedule planned(const SearchSpace&) const { return {}; }
  // Whether a budget (StrategyOptions) ended its last proposal before the search
  // was done; a strategy that knows no budget is never stopped by one.
  virtual bool stopped_by_budget() const { return false; }
};

// The plan's grid: every case × setting (and the default setting, unless the plan
// excludes it) in the plan's order, with drift checks and the shard; the points of
// make_schedule, all proposed at once.
std::unique_ptr<SearchStrategy> make_grid_strategy();

// ---------------------------------------------------------------- named strategies

// What every named strategy may be asked to respect. The objective is the
// analysis's, parsed once where the user gave it (parse_objective); a budget bounds
// the distinct settings a strategy measures per case, or the GPU seconds it spends
// per case.
struct StrategyOptions {
  Objective objective;
  std::optional<int> budget_points;
  std::optional<double> budget_seconds;
  std::uint64_t seed = 0;
  // The GPU's clock map (clock_map.hpp), learned from earlier sweeps of other
  // workloads on the same GPU model: `auto` uses it on a long line of one knob when
  // the objective is energy (with or without a slowdown limit); the other strategies
  // ignore it.
  std::shared_ptr<const ClockMap> clock_map;
};

struct StrategyDefinition {
  std::string name;  // letters, digits, '-' and '_'
  std::string help;  // one line, for --strategy
  std::function<std::unique_ptr<SearchStrategy>(const StrategyOptions& options)> make;
};

// Adds a host program's strategy to the registry, after the library's own: from
// then on make_strategy, the --strategy option of a command line the host runs,
// TunerOptions::strategy and a SearchSession made by name know it. Throws
// ConfigError for an empty or malformed name, a name already registered or no make
// function. Register at start-up, before any search runs: the registry is not
// guarded against other threads, and a registration invalidates a span that
// search_strategies() returned before it.
void register_strategy(StrategyDefinition definition);
// The registered strategies ("grid" first, the library's own, then the host's in
// the order registered); the only list --strategy knows.
std::span<const StrategyDefinition> search_strategies();
// Throws ConfigError naming the registered strategies for an unknown name.
std::unique_ptr<SearchStrategy> make_strategy(std::string_view name, const StrategyOptions& options);
// The --strategy help, listing every registered strategy.
std::string strategy_help();

// What a search found for one case: the measured setting with the least value of
// options.objective (against the case's measured default setting), by the mean of
// its windows; nullopt when no measured setting satisfies the objective.
std::optional<Setting> best_measured_setting(const Case& workload_case,
                                             std::span<const PointOutcome> measured,
                                             const StrategyOptions& options);

// ---------------------------------------------------------------- named choices

// Setting orders a plan's `order` names. An order arranges one case's settings
// (ascending on entry); `case_index` lets a seeded order differ per case.
struct SettingOrder {
  std::string name;
  std::string help;
  std::function<void(std::vector<Setting>& settings, std::uint64_t seed, std::size_t case_index)> arrange;
};
// The registered orders: "random" (seeded, per case) and "ascending".
std::span<const SettingOrder> setting_orders();
const SettingOrder& setting_order(Order order);
// Reads an order's name; nullopt for an unknown one.
std::optional<Order> parse_order(std::string_view name);

// ---------------------------------------------------------------- stop rules

// One reason to measure another repetition of a grid point, or to stop.
class StopCriterion {
 public:
  enum class Verdict { another, enough, undecided };
  virtual ~StopCriterion() = default;
  virtual Verdict judge(std::span<const double> energy_per_item_j) const = 0;
};

// Criteria asked in order; the first that decides wins, and none deciding means enough.
class StopRule {
 public:
  StopRule& add(std::unique_ptr<StopCriterion> criterion);
  bool needs_another_repetition(std::span<const double> energy_per_item_j) const;

 private:
  std::vector<std::shared_ptr<const StopCriterion>> criteria_;
};

// The plan's rule: at least `repetitions`; at most `max_repetitions`; in between,
// more while the 95 % confidence half-width of energy per item is above
// `ci_target_pct` of its mean (a target needs two repetitions to judge).
StopRule make_stop_rule(const MeasurePolicy& policy);

}  // namespace dvfslab
