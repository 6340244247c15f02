#pragma once
// What a search knows of one case: every setting measured so far (from the
// outcomes the runner reported, resumed ones included), the objective's value of
// each against the case's baseline, the noise of the measurements, and the rules
// that turn "I need this setting's value" into a probe (docs/search.md).
//
// The searches are replayed from the start on every propose(): each is a plain
// function of what was measured, so a search needs no state of its own and a
// resumed run continues where it stopped. A replay ends at the first setting whose
// value it needs and does not have: look() and compare() throw ProbeNeeded, which
// the strategy turns into the next point to measure.
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/strategy.hpp"

namespace dvfslab::search_detail {

// The replay needs this setting measured (for the first time, or once more).
struct ProbeNeeded {
  Setting setting;
};
// The budget allows no further probe for this case: the search ends with what it has.
struct BudgetSpent {};

// One measured setting of the case.
struct Reading {
  Setting setting;
  std::vector<double> energy_per_item_j;   // every window, in measuring order
  std::vector<double> items_per_s_series;  // every window of this run that carried a throughput
  double items_per_s = 0;                  // their mean
  double mean_power_w = 0;
  int proposals = 0;       // times the setting was proposed in this run
  int first_measured = 0;  // the order of its first outcome among the case's settings
  // A window ran at another clock with no limit to explain it: the GPU did not apply
  // the setting, so its readings say nothing of it (MeasurementFlags).
  bool not_applied = false;
  // The SM and memory clocks it ran at, to the MHz; absent where none were read.
  // Settings that ran at the same clocks are one operating point (a power limit
  // above the draw, an SM clock above what a binding limit allows): their windows
  // are draws of one value, pooled in `operating_point`.
  std::optional<std::pair<long, long>> clocks;
  // The windows its value is judged from: its own, or those of every setting of its
  // operating point.
  struct Windows {
    std::vector<double> energy_per_item_j, items_per_s_series;
    double items_per_s = 0, mean_power_w = 0;
  };
  Windows operating_point;
  // The objective's; absent: violates its constraint, or the setting was not applied.
  std::optional<double> value;
  // Within the noise of the objective's constraint: a little faster or slower (or
  // less or more power) would change whether it is feasible.
  bool borderline = false;
};

enum class Comparison { less, greater, tie, both_infeasible };

// The evidence's chosen constants (docs/search.md, "Fitted and tuned choices"): every
// strategy uses these defaults; search_bench varies them within `auto` to validate
// them leave-one-table-out.
struct EvidenceSettings {
  // The noise assumed before any setting was measured twice, weighted as one degree
  // of freedom, so that the case's own repetitions soon outweigh it: the twins' 1 %.
  double prior_relative_noise = 0.01;
  // Windows a setting may get beyond the plan's most before it is no longer measured
  // again to settle a comparison.
  int extra_windows = 3;
  // Two settings whose difference is uncertain are not measured again when choosing
  // the lower mean can cost less than this share of the value: half the 1 % a
  // search aims for, because a search chains several such decisions (search_bench: 1 %
  // ended within 1 % of the optimum less often).
  double resolution = 0.005;
};

class CaseEvidence {
 public:
  CaseEvidence(const Case& workload_case, std::span<const PointOutcome> measured, const Objective& objective,
               const MeasurePolicy& policy, const StrategyOptions& options,
               const EvidenceSettings& settings = {});

  // The setting's reading; throws ProbeNeeded when it was not measured yet (or is
  // borderline on the constraint and may be measured again), or BudgetSpent when
  // the budget allows no new setting.
  const Reading& look(const Setting& setting);
  // a against b under the objective. Where their confidence intervals overlap (the
  // difference's holds zero), the one with fewer windows is measured again
  // (ProbeNeeded) until the lower mean is within the resolution of the other at
  // worst, both reached the window cap or the budget is spent; then the means decide
  // (a tie only when equal).
  Comparison compare(const Setting& a, const Setting& b);
  bool known(const Setting& setting) const { return readings_.count(setting) > 0; }
  // Measures `setting` again (ProbeNeeded) until it has the plan's least repetitions:
  // a search's answer is measured at least as well as a sweep point.
  void confirm(const Setting& setting);

  // The objective's value of a setting with this time and power per item (none where
  // that breaks the objective's constraint), against the case's baseline.
  std::optional<double> value_at(double time_per_item_s, double power_w) const;
  const std::map<Setting, Reading>& readings() const { return readings_; }

  // The measured setting with the least objective value (feasible only), by mean.
  std::optional<Setting> best() const;
  // The same among `candidates`.
  std::optional<Setting> best_among(const std::vector<Setting>& candidates) const;
  // Relative standard deviation of one window's energy per item, pooled over the
  // case's repeated settings with a prior of one degree of freedom.
  double relative_noise() const { return energy_noise_; }

 private:
  // The relative variance of the objective's value of `reading` (its mean over the
  // windows it has), from the energy and throughput noise.
  double relative_value_variance(const Reading& reading) const;
  void pool_operating_points();
  double difference_half_width(const Reading& a, const Reading& b) const;
  bool may_measure_again(const Reading& reading) const;
  double seconds_spent() const;

  Objective objective_;
  MeasurePolicy policy_;
  StrategyOptions options_;
  EvidenceSettings settings_;
  std::map<Setting, Reading> readings_;
  std::optional<PointSummary> baseline_;
  double energy_noise_ = 0;
  double throughput_noise_ = 0;
};

// The knobs of a search space as a grid: the distinct values of every knob the
// settings vary (ascending), recovered from the settings (a cross product).
class KnobGrid {
 public:
  explicit KnobGrid(const std::vector<Setting>& settings);
  // Knobs with more than one value: 0 = SM clock, 1 = memory clock, 2 = power limit.
  const std::vector<int>& axes() const { return axes_; }
  // The settings that equal `through` on every knob but `axis`, ascending on it.
  std::vector<Setting> line(const Setting& through, int axis) const;
  // The setting with every knob at its highest value (closest to the default).
  Setting top() const;
  const std::vector<Setting>& settings() const { return settings_; }
  bool empty() const { return settings_.empty(); }

 private:
  std::vector<Setting> settings_;
  std::vector<int> axes_;
};

// Position of `setting` in `line`; line.size() when absent.
std::size_t index_of(const std::vector<Setting>& line, const Setting& setting);

}  // namespace dvfslab::search_detail
