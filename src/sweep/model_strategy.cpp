// The `model` search strategy: per case, measure a few settings spread over the
// space, fit the time-and-power model (include/dvfslab/model.hpp), measure the
// predicted optimum and its neighbours, refit, and stop once the model predicts no
// setting left to gain more than the measurement noise, or the budget is spent.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "dvfslab/analysis.hpp"
#include "dvfslab/model.hpp"
#include "dvfslab/strategy.hpp"
#include "sweep/model_strategy.hpp"

namespace dvfslab {
namespace {

constexpr std::size_t initial_probes = 4;
constexpr double noise_floor = 0.005;  // relative; the gain a model must promise to be believed

struct Measured {
  double time_s = 0, power_w = 0;  // per item, mean over repetitions
  double relative_sd = 0;          // of energy per item over repetitions
};

class ModelStrategy final : public SearchStrategy {
 public:
  explicit ModelStrategy(const StrategyOptions& options)
      : options_(options), objective_(parse_objective(options.objective)) {}

  std::string name() const override { return "model"; }

  std::vector<ScheduledPoint> propose(const SearchSpace& space,
                                      std::span<const PointOutcome> measured) override {
    for (const Case& workload_case : space.cases) {
      if (done_.count(workload_case)) continue;
      auto points = propose_for(workload_case, space.settings, measured);
      if (!points.empty()) return points;
      done_.insert(workload_case);
    }
    return {};
  }

 private:
  std::map<Setting, Measured> measured_of(const Case& workload_case,
                                          std::span<const PointOutcome> outcomes) const {
    std::map<Setting, std::vector<const PointOutcome*>> by_setting;
    for (const auto& o : outcomes)
      if (o.point.workload_case == workload_case && o.items_per_s && *o.items_per_s > 0 && o.mean_power_w)
        by_setting[o.point.setting].push_back(&o);
    std::map<Setting, Measured> result;
    for (const auto& [setting, list] : by_setting) {
      Measured m;
      for (const auto* o : list) m.time_s += 1.0 / *o->items_per_s, m.power_w += *o->mean_power_w;
      m.time_s /= double(list.size()), m.power_w /= double(list.size());
      const auto& series = list.back()->energy_per_item_j_series;
      if (series.size() >= 2) {
        double mean = 0, sq = 0;
        for (double e : series) mean += e;
        mean /= double(series.size());
        for (double e : series) sq += (e - mean) * (e - mean);
        m.relative_sd = std::sqrt(sq / double(series.size() - 1)) / mean;
      }
      result[setting] = m;
    }
    return result;
  }

  // Lower is better; absent when a constraint excludes the setting.
  std::optional<double> score(double time_s, double power_w, double baseline_time_s) const {
    const double energy = time_s * power_w;
    switch (objective_.kind) {
      case Objective::Kind::energy: return energy;
      case Objective::Kind::edp: return energy * time_s;
      case Objective::Kind::ed2p: return energy * time_s * time_s;
      case Objective::Kind::energy_within_slowdown:
        if (time_s > baseline_time_s * (1 + objective_.limit / 100)) return std::nullopt;
        return energy;
      case Objective::Kind::time_within_power:
        if (power_w > objective_.limit) return std::nullopt;
        return time_s;
    }
    return std::nullopt;
  }

  std::vector<ScheduledPoint> points_at(const Case& workload_case,
                                        const std::vector<Setting>& settings) const {
    std::vector<ScheduledPoint> points;
    for (const auto& s : settings) points.push_back({workload_case, s, PointRole::grid, 0});
    return points;
  }

  std::vector<ScheduledPoint> propose_for(const Case& workload_case, const std::vector<Setting>& settings,
                                          std::span<const PointOutcome> outcomes) const {
    if (settings.empty()) return {};
    const auto measured = measured_of(workload_case, outcomes);
    const std::size_t budget =
        std::min(settings.size(), std::size_t(options_.budget_points.value_or(int(settings.size()))));
    if (measured.size() >= budget) return {};
    std::vector<Setting> next;
    auto add = [&](const Setting& s) {
      if (!measured.count(s) && std::find(next.begin(), next.end(), s) == next.end() &&
          measured.size() + next.size() < budget)
        next.push_back(s);
    };
    if (measured.size() < std::min(initial_probes, budget)) {
      // The top setting and the rest spread evenly, lowest included.
      const std::size_t k = std::min(initial_probes, budget);
      for (std::size_t i = k; i-- > 0;)
        add(settings[k == 1 ? settings.size() - 1
                            : std::size_t(
                                  std::lround(double(i) * double(settings.size() - 1) / double(k - 1)))]);
      return points_at(workload_case, next);
    }

    std::vector<model::Observation> points;
    double noise = noise_floor;
    for (const auto& [setting, m] : measured) {
      points.push_back({setting, m.time_s, m.power_w, std::nullopt, std::nullopt});
      noise = std::max(noise, m.relative_sd);
    }
    const auto fitted =
        model::fit(points, {"", to_string(workload_case), settings.back()}, {.cross_validate = false});
    const double baseline_time = fitted.predict(settings.back()).time_s.value;

    std::optional<double> best_measured;
    for (const auto& [setting, m] : measured)
      if (const auto v = score(m.time_s, m.power_w, baseline_time);
          v && (!best_measured || *v < *best_measured))
        best_measured = v;
    std::optional<std::size_t> predicted_best;
    std::optional<double> predicted_value;
    for (std::size_t i = 0; i < settings.size(); ++i) {
      const auto at = fitted.predict(settings[i]);
      const auto v = score(at.time_s.value, at.power_w.value, baseline_time);
      if (v && (!predicted_value || *v < *predicted_value)) predicted_value = v, predicted_best = i;
    }
    if (!predicted_best) return {};
    const Setting& optimum = settings[*predicted_best];
    const bool gain_is_real = !best_measured || *predicted_value < *best_measured * (1 - noise);
    if (!measured.count(optimum) && gain_is_real) add(optimum);
    // Neighbours of the predicted optimum, once: they bracket it when the model is off.
    if (measured.count(optimum) || gain_is_real) {
      if (*predicted_best > 0) add(settings[*predicted_best - 1]);
      if (*predicted_best + 1 < settings.size()) add(settings[*predicted_best + 1]);
    }
    return points_at(workload_case, next);
  }

  StrategyOptions options_;
  Objective objective_;
  std::set<Case> done_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_model_strategy(const StrategyOptions& options) {
  return std::make_unique<ModelStrategy>(options);
}

}  // namespace dvfslab
