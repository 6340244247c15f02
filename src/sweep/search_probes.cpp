// What a search found: its probes in measuring order, and how sure the optimum is.
#include <cmath>
#include <map>
#include <numeric>

#include "dvfslab/search.hpp"

namespace dvfslab {
namespace {

// The estimate the objective ranks points by.
const Estimate& ranked_estimate(const Objective& objective, const PointSummary& point) {
  return point.*definition_of(objective).ranked_by;
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// The standard error of a mean from its 95 % half-width (Student t).
double standard_error(const PointSummary& point, const Estimate& value) {
  return *value.ci95_half_width / student_t_975(point.repetitions - 1);
}

}  // namespace

std::vector<Probe> probes_in_order(std::span<const PointOutcome> outcomes) {
  std::vector<Probe> probes;
  std::map<std::pair<Case, Setting>, std::size_t> index;
  for (const PointOutcome& outcome : outcomes) {
    if (outcome.point.role != PointRole::grid || outcome.energy_per_item_j_series.empty()) continue;
    const auto key = std::pair{outcome.point.workload_case, outcome.point.setting};
    auto [at, added] = index.emplace(key, probes.size());
    if (added) {
      probes.push_back({key.first, key.second, static_cast<int>(probes.size()) + 1, 0, 0.0, {}});
    }
    // The latest outcome of a setting holds all its repetitions.
    Probe& probe = probes[at->second];
    const auto& series = outcome.energy_per_item_j_series;
    probe.repetitions = static_cast<int>(series.size());
    probe.flags |= outcome.flags;
    probe.energy_per_item_j =
        std::accumulate(series.begin(), series.end(), 0.0) / static_cast<double>(series.size());
  }
  return probes;
}

std::optional<double> optimum_confidence(const CaseAnalysis& analysis, const Objective& objective,
                                         double tolerance_pct) {
  if (!analysis.optimum) return std::nullopt;
  const PointSummary& baseline = analysis.points[analysis.baseline];
  std::vector<std::size_t> eligible;
  for (std::size_t i = 0; i < analysis.points.size(); ++i) {
    if (objective_value(objective, analysis.points[i], baseline)) eligible.push_back(i);
  }
  // The pooled relative spread (coefficient of variation) of the repeated points.
  double squared_cv_sum = 0;
  int repeated = 0;
  for (std::size_t i : eligible) {
    const PointSummary& point = analysis.points[i];
    const Estimate& value = ranked_estimate(objective, point);
    if (point.repetitions < 2 || !value.ci95_half_width || value.mean <= 0) continue;
    const double cv = standard_error(point, value) * std::sqrt(point.repetitions) / value.mean;
    squared_cv_sum += cv * cv;
    ++repeated;
  }
  if (repeated == 0) return std::nullopt;
  const double pooled_cv = std::sqrt(squared_cv_sum / repeated);
  const auto mean_and_error = [&](std::size_t i) {
    const PointSummary& point = analysis.points[i];
    const Estimate& value = ranked_estimate(objective, point);
    const double error = point.repetitions >= 2 && value.ci95_half_width
                             ? standard_error(point, value)
                             : pooled_cv * value.mean / std::sqrt(std::max(point.repetitions, 1));
    return std::pair{value.mean, error};
  };
  const auto [optimum_mean, optimum_error] = mean_and_error(*analysis.optimum);
  const double factor = 1.0 + tolerance_pct / 100.0;
  double confidence = 1.0;
  for (std::size_t i : eligible) {
    if (i == *analysis.optimum) continue;
    const auto [mean, error] = mean_and_error(i);
    // P(optimum <= factor × other) for independent normal means.
    const double margin = factor * mean - optimum_mean;
    const double spread = std::hypot(optimum_error, factor * error);
    confidence *= spread > 0 ? normal_cdf(margin / spread) : (margin >= 0 ? 1.0 : 0.0);
  }
  return confidence;
}

}  // namespace dvfslab
