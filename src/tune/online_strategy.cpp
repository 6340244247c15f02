// The online search replays itself from the outcomes on every call: the search is a
// pure function of what was measured, and the first setting it needs but lacks is
// the next proposal. No state survives between calls, so the outcomes alone decide.
// With the GPU's clock map, a long line of SM clocks is searched where the map
// predicts its dips (dvfslab/clock_map.hpp), as `auto` searches one.
#include "tune/online_strategy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "dvfslab/analysis.hpp"
#include "dvfslab/clock_map.hpp"
#include "tune/objective_score.hpp"

namespace dvfslab::tune {
namespace {

using KnobValue = std::optional<int>;
using KnobField = KnobValue Setting::*;
constexpr KnobField knob_fields[] = {&Setting::sm_mhz, &Setting::mem_mhz, &Setting::power_limit_w};
constexpr double golden_fraction = 0.381966;  // 1 − 1/φ
const double unusable = std::numeric_limits<double>::infinity();

class Replay {
 public:
  Replay(const SearchSpace& space, std::span<const PointOutcome> measured, const Objective& objective,
         double near_tie_fraction, const ClockMap* clock_map)
      : near_tie_fraction_(near_tie_fraction), allowed_(space.settings.begin(), space.settings.end()) {
    allowed_.insert(Setting{});
    const PointOutcome* baseline = nullptr;
    for (const PointOutcome& outcome : measured)
      if (outcome.point.setting.is_default()) baseline = &outcome;
    if (baseline == nullptr) return;  // the baseline comes first
    for (const PointOutcome& outcome : measured)
      scores_[outcome.point.setting] = objective_score(objective, outcome, *baseline).value_or(unusable);
    for (const KnobField field : knob_fields) {
      std::set<int> values;
      bool absent_allowed = false;
      for (const Setting& setting : space.settings) {
        if (setting.*field)
          values.insert(*(setting.*field));
        else
          absent_allowed = true;
      }
      if (values.empty()) continue;
      Axis axis{field, {values.begin(), values.end()}, {}};
      if (clock_map != nullptr && field == &Setting::sm_mhz) axis.factors = map_factors(*clock_map, values);
      // The knob left as found is its top: data-centre GPUs default to the highest clocks and limit.
      if (absent_allowed) axis.values.push_back(std::nullopt);
      axes_.push_back(std::move(axis));
    }
  }

  // The next setting to measure; absent when the search is done.
  std::optional<Setting> next() {
    if (scores_.find(Setting{}) == scores_.end()) return Setting{};
    Setting current;
    for (const Axis& axis : axes_) {
      const auto best = axis.factors.empty() ? search_axis(axis, current) : map_guided_axis(axis, current);
      if (!best) return missing_;
      current.*(axis.field) = axis.values[*best];
    }
    return std::nullopt;
  }

 private:
  struct Axis {
    KnobField field;
    std::vector<KnobValue> values;  // ascending, the knob left as found last
    // The clock map's factor of each value set (not of the knob left as found, whose
    // clock the tuner does not know); empty where the map does not guide this axis.
    std::vector<double> factors;
  };

  // The map's factors of the SM clocks `values`, or none where the map does not guide
  // a search of them (clock_map_guiding_factors), as in `auto`.
  static std::vector<double> map_factors(const ClockMap& map, const std::set<int>& values) {
    std::vector<Setting> line;
    for (const int mhz : values) {
      Setting setting;
      setting.sm_mhz = mhz;
      line.push_back(setting);
    }
    return clock_map_guiding_factors(map, line).value_or(std::vector<double>{});
  }

  // The score of `setting`; absent (and remembered as missing) when unmeasured.
  std::optional<double> score(const Setting& setting) {
    if (!allowed_.contains(setting)) return unusable;
    const auto found = scores_.find(setting);
    if (found != scores_.end()) return found->second;
    missing_ = setting;
    return std::nullopt;
  }

  std::optional<double> score_at(const Axis& axis, Setting at, std::size_t index) {
    at.*(axis.field) = axis.values[index];
    return score(at);
  }

  // Golden-section search over one axis; absent while a needed point is unmeasured.
  std::optional<std::size_t> search_axis(const Axis& axis, const Setting& at) {
    std::size_t low = 0;
    std::size_t high = axis.values.size() - 1;
    while (high - low > 2) {
      const auto step =
          std::max<std::size_t>(1, std::lround(static_cast<double>(high - low) * golden_fraction));
      const std::size_t a = low + step;
      const std::size_t b = std::max(a + 1, high - step);
      const auto upper = score_at(axis, at, b);  // nearer the default: the cheaper probe first
      if (!upper) return std::nullopt;
      const auto lower = score_at(axis, at, a);
      if (!lower) return std::nullopt;
      // Near-ties move down: published energy curves often run flat from the top and
      // fall only at the low end (power limits), and a flat stretch hides that under
      // the noise. Unusable ties (both too slow for the constraint) move up.
      if (*lower < *upper * (1 + near_tie_fraction_))
        high = b;
      else
        low = a;
    }
    std::size_t best = high;
    double best_score = unusable;
    for (std::size_t index = high + 1; index-- > low;) {
      const auto value = score_at(axis, at, index);
      if (!value) return std::nullopt;
      if (*value < best_score) {
        best_score = *value;
        best = index;
      }
    }
    return best;
  }

  // The map-guided search of an axis: the spread values, then those the map predicts
  // cheapest (auto's numbers of each), and the best measured on the axis; absent while
  // a needed point is unmeasured. The knob left as found runs at the top clock, as
  // this search assumes throughout: its reading (the baseline's, on the first axis)
  // stands for the top clock's, which is not probed again.
  std::optional<std::size_t> map_guided_axis(const Axis& axis, const Setting& at) {
    const MapGuidedLineRules rules;
    const std::size_t top = axis.factors.size() - 1;
    const auto setting_read_for = [&](std::size_t index) {
      Setting setting = at;
      setting.*(axis.field) = index == top ? std::nullopt : axis.values[index];
      return setting;
    };
    std::vector<std::pair<std::size_t, double>> spread_values;
    for (const std::size_t index : clock_map_spread_indices(axis.factors.size(), rules.spread)) {
      const auto value = score(setting_read_for(index));
      if (!value) return std::nullopt;
      if (std::isfinite(*value)) spread_values.emplace_back(index, *value);
    }
    for (const std::size_t index :
         clock_map_predicted_indices(spread_values, axis.factors, rules.spread, rules.predicted)) {
      if (!score(setting_read_for(index))) return std::nullopt;
    }
    // From the top down, so that a tie keeps the setting nearer the default; the top
    // clock read as the knob left as found is that, where the axis has it.
    std::size_t best = axis.values.size() - 1;
    double best_score = unusable;
    for (std::size_t index = axis.factors.size(); index-- > 0;) {
      const auto found = scores_.find(setting_read_for(index));
      if (found != scores_.end() && found->second < best_score) {
        best_score = found->second;
        best = index == top ? axis.values.size() - 1 : index;
      }
    }
    return best;
  }

  double near_tie_fraction_;
  std::set<Setting> allowed_;
  std::map<Setting, double> scores_;
  std::vector<Axis> axes_;
  std::optional<Setting> missing_;
};

class OnlineStrategy final : public SearchStrategy {
 public:
  OnlineStrategy(const StrategyOptions& options, const OnlineSettings& settings)
      : objective_(options.objective),
        settings_(settings),
        clock_map_(clock_map_guides(options.objective) ? options.clock_map : nullptr) {}
  std::string name() const override { return "online"; }
  std::vector<ScheduledPoint> propose(const SearchSpace& space,
                                      std::span<const PointOutcome> measured) override {
    if (space.cases.empty()) return {};
    const auto next =
        Replay(space, measured, objective_, settings_.near_tie_fraction, clock_map_.get()).next();
    if (!next) return {};
    return {ScheduledPoint{space.cases.front(), *next, PointRole::grid, 0}};
  }

 private:
  Objective objective_;
  OnlineSettings settings_;
  std::shared_ptr<const ClockMap> clock_map_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_online_strategy(const StrategyOptions& options,
                                                     const OnlineSettings& settings) {
  return std::make_unique<OnlineStrategy>(options, settings);
}

}  // namespace dvfslab::tune
