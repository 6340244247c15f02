// Workload power profiles against a case's baseline and its tuned optimum: what
// NVIDIA's pretuned profiles give against the setting a sweep or search found.
#include "analysis/best_point.hpp"
#include "dvfslab/analysis.hpp"

namespace dvfslab {
namespace {

double change_pct(double to, double from) { return from > 0 ? (to - from) / from * 100.0 : 0.0; }

}  // namespace

void compare_profiles(CaseAnalysis& analysis, const Objective& objective) {
  analysis.tuned_optimum.reset();
  analysis.profiles.clear();
  const auto& points = analysis.points;
  if (points.empty()) return;
  const PointSummary& baseline = points[analysis.baseline];

  analysis.tuned_optimum = analysis_detail::best_point(
      points, baseline, objective, [](const PointSummary& point) { return !point.setting.workload_profile; });

  for (std::size_t i = 0; i < points.size(); ++i) {
    const PointSummary& point = points[i];
    if (!point.setting.workload_profile) continue;
    ProfileComparison comparison;
    comparison.point = i;
    comparison.energy_saving_pct = -change_pct(point.energy_per_item_j.mean, baseline.energy_per_item_j.mean);
    comparison.time_change_pct = change_pct(point.time_per_iteration_s.mean, baseline.time_per_iteration_s.mean);
    if (analysis.tuned_optimum) {
      const PointSummary& tuned = points[*analysis.tuned_optimum];
      comparison.tuned_energy_saving_pct = -change_pct(tuned.energy_per_item_j.mean, point.energy_per_item_j.mean);
      comparison.tuned_time_change_pct =
          change_pct(tuned.time_per_iteration_s.mean, point.time_per_iteration_s.mean);
    }
    analysis.profiles.push_back(comparison);
  }
}

}  // namespace dvfslab
