// What a search knows of one case (see search_evidence.hpp).
#include "sweep/search_evidence.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

namespace dvfslab::search_detail {
namespace {

bool objective_uses_time(const Objective& objective) { return definition_of(objective).uses_time; }

// Ran at the same clocks (docs/search.md#noise), under the same workload power profile.
bool same_operating_point(const Reading& a, const Reading& b) {
  return a.clocks && a.clocks == b.clocks && a.setting.workload_profile == b.setting.workload_profile;
}

// Relative variance of one window, pooled over the series with a prior of one
// degree of freedom at prior_relative_noise.
template <typename Series>
double pooled_relative_variance(const std::map<Setting, Reading>& readings, double prior_relative_noise,
                                Series series_of) {
  double squares = prior_relative_noise * prior_relative_noise;
  double degrees_of_freedom = 1;
  for (const auto& [setting, reading] : readings) {
    const std::vector<double>& series = series_of(reading);
    if (series.size() < 2) continue;
    const double mean =
        std::accumulate(series.begin(), series.end(), 0.0) / static_cast<double>(series.size());
    if (mean <= 0) continue;
    for (double value : series) squares += (value / mean - 1) * (value / mean - 1);
    degrees_of_freedom += static_cast<double>(series.size() - 1);
  }
  return squares / degrees_of_freedom;
}

int windows_of(const std::vector<double>& series) { return std::max(1, static_cast<int>(series.size())); }

PointSummary summary_of(const Reading& reading) {
  const Reading::Windows& windows = reading.operating_point;
  return per_item_summary(reading.setting, windows.energy_per_item_j, windows.items_per_s,
                          windows.mean_power_w);
}

// A clock a reading can be keyed by (a store edited by hand may hold anything).
bool plausible_clock(double mhz) { return std::isfinite(mhz) && mhz >= 0 && mhz < 1e6; }

double mean_of(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

}  // namespace

CaseEvidence::CaseEvidence(const Case& workload_case, std::span<const PointOutcome> measured,
                           const Objective& objective, const MeasurePolicy& policy,
                           const StrategyOptions& options, const EvidenceSettings& settings)
    : objective_(objective), policy_(policy), options_(options), settings_(settings) {
  struct Sums {
    double sum = 0;
    int count = 0;
    void add(double value) { sum += value, ++count; }
    double mean() const { return sum / count; }
  };
  std::map<Setting, Sums> power, sm_clock, mem_clock;
  for (const PointOutcome& outcome : measured) {
    if (outcome.point.role != PointRole::grid || !(outcome.point.workload_case == workload_case)) continue;
    const bool first = readings_.count(outcome.point.setting) == 0;
    Reading& reading = readings_[outcome.point.setting];
    if (first) reading.first_measured = static_cast<int>(readings_.size());
    reading.setting = outcome.point.setting;
    // Each outcome carries the setting's whole series so far: the latest is complete.
    reading.energy_per_item_j = outcome.energy_per_item_j_series;
    // An outcome without the series (from another runner) counts as one window.
    if (!outcome.items_per_s_series.empty())
      reading.items_per_s_series = outcome.items_per_s_series;
    else if (outcome.items_per_s)
      reading.items_per_s_series.push_back(*outcome.items_per_s);
    ++reading.proposals;
    reading.not_applied = reading.not_applied || outcome.flags.setting_not_applied();
    if (outcome.mean_power_w) power[outcome.point.setting].add(*outcome.mean_power_w);
    if (outcome.sm_mhz_mean) sm_clock[outcome.point.setting].add(*outcome.sm_mhz_mean);
    if (outcome.mem_mhz_mean) mem_clock[outcome.point.setting].add(*outcome.mem_mhz_mean);
  }
  for (auto it = readings_.begin(); it != readings_.end();) {
    it = it->second.energy_per_item_j.empty() ? readings_.erase(it) : std::next(it);
  }
  for (auto& [setting, reading] : readings_) {
    if (!reading.items_per_s_series.empty()) reading.items_per_s = mean_of(reading.items_per_s_series);
    if (const auto it = power.find(setting); it != power.end()) reading.mean_power_w = it->second.mean();
    const auto sm = sm_clock.find(setting);
    const auto mem = mem_clock.find(setting);
    if (sm != sm_clock.end() && mem != mem_clock.end() && plausible_clock(sm->second.mean()) &&
        plausible_clock(mem->second.mean()))
      reading.clocks = std::pair{std::lround(sm->second.mean()), std::lround(mem->second.mean())};
    reading.operating_point = {reading.energy_per_item_j, reading.items_per_s_series, reading.items_per_s,
                               reading.mean_power_w};
  }
  const auto baseline_reading = readings_.find(Setting{});
  const std::optional<PointSummary> baseline = baseline_reading == readings_.end()
                                                   ? std::nullopt
                                                   : std::optional(summary_of(baseline_reading->second));
  baseline_ = baseline;
  // The readings are final here: their noise is pooled once, not at every comparison.
  energy_noise_ = std::sqrt(pooled_relative_variance(
      readings_, settings_.prior_relative_noise,
      [](const Reading& r) -> const auto& { return r.energy_per_item_j; }));
  throughput_noise_ = std::sqrt(pooled_relative_variance(
      readings_, settings_.prior_relative_noise,
      [](const Reading& r) -> const auto& { return r.items_per_s_series; }));
  pool_operating_points();
  // A time limit carries the throughput's noise, a power limit that of energy over
  // time; one relative to the baseline carries the baseline's noise too.
  const double constraint_noise = definition_of(objective_).constraint == ObjectiveConstraint::time
                                      ? throughput_noise_
                                      : std::hypot(energy_noise_, throughput_noise_);
  for (auto& [setting, reading] : readings_) {
    const PointSummary point = summary_of(reading);
    // Without time a time-based objective cannot judge the point (an outcome of
    // another runner may carry energy only): look() measures it again. A setting the
    // GPU did not apply has no value: the search treats it as out of bounds.
    if (reading.not_applied || (objective_uses_time(objective_) && reading.items_per_s <= 0)) continue;
    reading.value = objective_value(objective_, point, baseline.value_or(point));
    const int baseline_windows = baseline_reading == readings_.end() || setting == Setting{}
                                     ? 0
                                     : static_cast<int>(baseline_reading->second.items_per_s_series.size());
    const double uncertainty = 2.0 * constraint_noise *
                               std::sqrt(1.0 / windows_of(reading.items_per_s_series) +
                                         (baseline_windows > 0 ? 1.0 / baseline_windows : 0.0));
    const auto scaled = [&](double factor) {
      PointSummary changed = point;
      changed.time_per_iteration_s.mean *= factor;
      changed.mean_power_w.mean *= factor;
      return objective_value(objective_, changed, baseline.value_or(point)).has_value();
    };
    reading.borderline = scaled(1 - uncertainty) != scaled(1 + uncertainty);
  }
}

const Reading& CaseEvidence::look(const Setting& setting) {
  const auto it = readings_.find(setting);
  if (it != readings_.end()) {
    const bool unjudged = objective_uses_time(objective_) && it->second.items_per_s <= 0;
    if (unjudged && may_measure_again(it->second)) throw ProbeNeeded{setting};
    if (it->second.borderline) {
      // The less certain of the setting and the baseline its limit depends on.
      const auto baseline = readings_.find(Setting{});
      const Reading* again = &it->second;
      if (baseline != readings_.end() &&
          baseline->second.items_per_s_series.size() < again->items_per_s_series.size())
        again = &baseline->second;
      if (may_measure_again(*again)) throw ProbeNeeded{again->setting};
      if (may_measure_again(it->second)) throw ProbeNeeded{setting};
    }
    return it->second;
  }
  // The baseline is measured whatever the budget: without it nothing can be
  // compared, and a search that measured nothing would have no answer at all.
  if (setting.is_default()) throw ProbeNeeded{setting};
  if (options_.budget_points && static_cast<int>(readings_.size()) >= *options_.budget_points)
    throw BudgetSpent{};
  // A probe's first visit: one window.
  const double probe_s = policy_.settle_s + policy_.resolved_duration_s(std::nullopt);
  if (options_.budget_seconds && seconds_spent() + probe_s > *options_.budget_seconds) throw BudgetSpent{};
  throw ProbeNeeded{setting};
}

Comparison CaseEvidence::compare(const Setting& a, const Setting& b) {
  const Reading& first = look(a);
  const Reading& second = look(b);
  if (!first.value && !second.value) return Comparison::both_infeasible;
  if (!first.value) return Comparison::greater;
  if (!second.value) return Comparison::less;
  if (same_operating_point(first, second)) return Comparison::tie;
  const double difference = *first.value - *second.value;
  const double uncertainty = difference_half_width(first, second);
  if (std::abs(difference) > uncertainty) return difference < 0 ? Comparison::less : Comparison::greater;
  // The difference's interval holds zero. Unless the lower mean could be worse than
  // the other by less than the resolution anyway, the less certain one is measured
  // again before either is trusted; then the means decide.
  if (uncertainty - std::abs(difference) > settings_.resolution * std::min(*first.value, *second.value)) {
    const bool first_less_certain = relative_value_variance(first) >= relative_value_variance(second);
    const Reading& again = first_less_certain ? first : second;
    const Reading& other = first_less_certain ? second : first;
    if (may_measure_again(again)) throw ProbeNeeded{again.setting};
    if (may_measure_again(other)) throw ProbeNeeded{other.setting};
  }
  if (difference == 0) return Comparison::tie;
  return difference < 0 ? Comparison::less : Comparison::greater;
}

void CaseEvidence::confirm(const Setting& setting) {
  const Reading& reading = look(setting);
  if (std::ssize(reading.energy_per_item_j) < policy_.repetitions && may_measure_again(reading))
    throw ProbeNeeded{setting};
}

std::optional<double> CaseEvidence::value_at(double time_per_item_s, double power_w) const {
  Reading reading;
  reading.energy_per_item_j = {time_per_item_s * power_w};
  reading.items_per_s = 1.0 / time_per_item_s;
  reading.mean_power_w = power_w;
  reading.operating_point = {reading.energy_per_item_j, {}, reading.items_per_s, power_w};
  const PointSummary point = summary_of(reading);
  return objective_value(objective_, point, baseline_.value_or(point));
}

namespace {

// Of the settings of one operating point, which share one value, the one measured
// first: measuring another of them must not move a search.
bool better_than(const Reading& candidate, const Reading* best) {
  if (!candidate.value) return false;
  if (!best || *candidate.value < *best->value) return true;
  return *candidate.value == *best->value && same_operating_point(candidate, *best) &&
         candidate.first_measured < best->first_measured;
}

}  // namespace

std::optional<Setting> CaseEvidence::best() const {
  const Reading* best = nullptr;
  for (const auto& [setting, reading] : readings_)
    if (better_than(reading, best)) best = &reading;
  return best ? std::optional(best->setting) : std::nullopt;
}

std::optional<Setting> CaseEvidence::best_among(const std::vector<Setting>& candidates) const {
  const Reading* best = nullptr;
  for (const Setting& setting : candidates) {
    const auto it = readings_.find(setting);
    if (it != readings_.end() && better_than(it->second, best)) best = &it->second;
  }
  return best ? std::optional(best->setting) : std::nullopt;
}

// Energy and throughput errors taken as independent; the throughput's is that of time.
double CaseEvidence::relative_value_variance(const Reading& reading) const {
  const ObjectiveDefinition& definition = definition_of(objective_);
  const double energy_noise = definition.energy_exponent * energy_noise_;
  const double time_noise = definition.time_exponent * throughput_noise_;
  return energy_noise * energy_noise / windows_of(reading.operating_point.energy_per_item_j) +
         time_noise * time_noise / windows_of(reading.operating_point.items_per_s_series);
}

// The baseline keeps its own windows: every value is relative to it. A setting the
// GPU did not apply has no value to pool.
void CaseEvidence::pool_operating_points() {
  // A workload power profile may change more than the clocks: only settings of the
  // same one are pooled.
  std::map<std::tuple<long, long, std::optional<int>>, std::vector<Reading*>> by_clocks;
  for (auto& [setting, reading] : readings_)
    if (reading.clocks && !setting.is_default() && !reading.not_applied)
      by_clocks[{reading.clocks->first, reading.clocks->second, setting.workload_profile}].push_back(
          &reading);
  for (const auto& [point, members] : by_clocks) {
    if (members.size() < 2) continue;
    Reading::Windows pooled;
    double power_sum = 0;
    for (const Reading* member : members) {
      const auto& energy = member->energy_per_item_j;
      pooled.energy_per_item_j.insert(pooled.energy_per_item_j.end(), energy.begin(), energy.end());
      const auto& throughput = member->items_per_s_series;
      pooled.items_per_s_series.insert(pooled.items_per_s_series.end(), throughput.begin(), throughput.end());
      power_sum += member->mean_power_w * static_cast<double>(energy.size());
    }
    pooled.items_per_s = pooled.items_per_s_series.empty() ? 0 : mean_of(pooled.items_per_s_series);
    pooled.mean_power_w = power_sum / static_cast<double>(pooled.energy_per_item_j.size());
    for (Reading* member : members) member->operating_point = pooled;
  }
}

// About 95 % of the difference of the two values' means, with the case's pooled
// noise: their intervals "overlap" when it holds zero.
double CaseEvidence::difference_half_width(const Reading& a, const Reading& b) const {
  const auto variance = [this](const Reading& reading) {
    const double value = reading.value.value_or(0);
    return value * value * relative_value_variance(reading);
  };
  return 2.0 * std::sqrt(variance(a) + variance(b));
}

bool CaseEvidence::may_measure_again(const Reading& reading) const {
  const int cap = std::max(policy_.repetitions, policy_.max_repetitions) + settings_.extra_windows;
  if (static_cast<int>(reading.energy_per_item_j.size()) >= cap) return false;
  const double window_s = policy_.resolved_duration_s(std::nullopt);
  return !options_.budget_seconds || seconds_spent() + window_s <= *options_.budget_seconds;
}

// Estimated from the plan: windows of its duration, a settle per setting.
double CaseEvidence::seconds_spent() const {
  double seconds = 0;
  for (const auto& [setting, reading] : readings_) {
    seconds += policy_.settle_s + policy_.resolved_duration_s(std::nullopt) *
                                      static_cast<double>(reading.energy_per_item_j.size());
  }
  return seconds;
}

// ---------------------------------------------------------------- the grid

namespace {

std::optional<int> knob(const Setting& setting, int axis) {
  switch (axis) {
    case 0: return setting.sm_mhz;
    case 1: return setting.mem_mhz;
    default: return setting.power_limit_w;
  }
}

constexpr int knob_count = 3;

}  // namespace

KnobGrid::KnobGrid(const std::vector<Setting>& settings) : settings_(settings) {
  for (int axis = 0; axis < knob_count; ++axis) {
    std::vector<std::optional<int>> values;
    for (const Setting& setting : settings_) values.push_back(knob(setting, axis));
    std::sort(values.begin(), values.end());
    if (std::unique(values.begin(), values.end()) - values.begin() > 1) axes_.push_back(axis);
  }
}

std::vector<Setting> KnobGrid::line(const Setting& through, int axis) const {
  std::vector<Setting> line;
  for (const Setting& setting : settings_) {
    bool same = true;
    for (int other = 0; other < knob_count; ++other) {
      if (other != axis && knob(setting, other) != knob(through, other)) same = false;
    }
    if (same) line.push_back(setting);
  }
  std::sort(line.begin(), line.end(),
            [axis](const Setting& a, const Setting& b) { return knob(a, axis) < knob(b, axis); });
  return line;
}

Setting KnobGrid::top() const { return *std::max_element(settings_.begin(), settings_.end()); }

std::size_t index_of(const std::vector<Setting>& line, const Setting& setting) {
  return static_cast<std::size_t>(std::find(line.begin(), line.end(), setting) - line.begin());
}

}  // namespace dvfslab::search_detail
