// The baseline of a case, its optimal setting for an objective, and the change
// between them.
#include <algorithm>
#include <tuple>

#include "analysis/best_point.hpp"
#include "dvfslab/analysis.hpp"

namespace dvfslab {
namespace analysis_detail {

std::optional<std::size_t> best_point(const std::vector<PointSummary>& points, const PointSummary& baseline,
                                      const Objective& objective,
                                      const std::function<bool(const PointSummary&)>& eligible) {
  // Strict comparison in setting order keeps the earliest setting among exact ties.
  std::optional<std::tuple<double, double>> best;
  std::optional<std::size_t> index;
  for (std::size_t i = 0; i < points.size(); ++i) {
    // What was measured there belongs to some other setting: never the answer.
    if (points[i].flags.setting_not_applied() || !eligible(points[i])) continue;
    const auto value = objective_value(objective, points[i], baseline);
    if (!value) continue;
    const std::tuple<double, double> candidate{*value, points[i].time_per_iteration_s.mean};
    if (!best || candidate < *best) {
      best = candidate;
      index = i;
    }
  }
  return index;
}

}  // namespace analysis_detail

std::string_view to_string(BaselineKind kind) {
  return kind == BaselineKind::vendor_default ? "vendor-default" : "highest-setting";
}

void choose_optimum(CaseAnalysis& analysis, const Objective& objective) {
  const auto& points = analysis.points;
  analysis.optimum.reset();
  analysis.energy_saving_pct.reset();
  analysis.time_change_pct.reset();
  analysis.power_change_pct.reset();
  if (points.empty()) return;

  // Points are in setting order, so the first default (or the first point that
  // requests no workload profile, else the first point) is the highest-ranked
  // candidate.
  analysis.baseline = 0;
  analysis.baseline_kind = BaselineKind::highest_setting;
  const auto first_without_profile =
      std::find_if(points.begin(), points.end(),
                   [](const PointSummary& point) { return !point.setting.workload_profile; });
  if (first_without_profile != points.end()) {
    analysis.baseline = static_cast<std::size_t>(first_without_profile - points.begin());
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].is_default) {
      analysis.baseline = i;
      analysis.baseline_kind = BaselineKind::vendor_default;
      break;
    }
  }
  const PointSummary& baseline = points[analysis.baseline];
  analysis.optimum =
      analysis_detail::best_point(points, baseline, objective, [](const PointSummary&) { return true; });
  if (!analysis.optimum) return;

  const PointSummary& optimum = points[*analysis.optimum];
  const auto change_pct = [](double to, double from) { return from > 0 ? (to - from) / from * 100.0 : 0.0; };
  const double base_energy = baseline.energy_per_item_j.mean;
  analysis.energy_saving_pct =
      base_energy > 0 ? (base_energy - optimum.energy_per_item_j.mean) / base_energy * 100.0 : 0.0;
  analysis.time_change_pct =
      change_pct(optimum.time_per_iteration_s.mean, baseline.time_per_iteration_s.mean);
  analysis.power_change_pct = change_pct(optimum.mean_power_w.mean, baseline.mean_power_w.mean);
}

}  // namespace dvfslab
