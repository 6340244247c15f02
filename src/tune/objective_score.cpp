// Scoring probes with the analysis's objective registry, so that `tune` chooses by
// exactly the rules `analyze` applies to a sweep.
#include "tune/objective_score.hpp"

namespace dvfslab::tune {
namespace {

std::optional<PointSummary> summary_of(const PointOutcome& outcome) {
  if (!outcome.energy_per_item_j || !outcome.items_per_s || *outcome.items_per_s <= 0) return std::nullopt;
  const double energy = *outcome.energy_per_item_j;
  const double items_per_s = *outcome.items_per_s;
  const double time = 1.0 / items_per_s;
  PointSummary summary =
      per_item_summary(outcome.point.setting, {energy}, items_per_s, outcome.mean_power_w.value_or(energy / time));
  summary.flags = outcome.flags;
  return summary;
}

}  // namespace

PointOutcome to_outcome(const ScheduledPoint& point, const WindowFigures& figures) {
  PointOutcome outcome;
  outcome.point = point;
  outcome.repetitions = 1;
  const double items = figures.items > 0 ? figures.items : static_cast<double>(figures.iterations);
  outcome.item_unit = figures.items > 0 ? "items" : "iterations";
  outcome.flags.clock_mismatch = figures.setting_not_applied;
  if (items > 0 && figures.duration_s > 0) {
    outcome.energy_per_item_j = figures.energy_j / items;
    outcome.energy_per_item_j_series = {*outcome.energy_per_item_j};
    outcome.items_per_s = items / figures.duration_s;
    outcome.items_per_s_series = {*outcome.items_per_s};
    outcome.mean_power_w = figures.energy_j / figures.duration_s;
  }
  return outcome;
}

std::optional<double> objective_score(const Objective& objective, const PointOutcome& probe,
                                      const PointOutcome& baseline) {
  const auto point = summary_of(probe);
  const auto base = summary_of(baseline);
  // Measured at other clocks than the setting names: no score for the setting.
  if (!point || !base || probe.flags.setting_not_applied()) return std::nullopt;
  return objective_value(objective, *point, *base);
}

}  // namespace dvfslab::tune
