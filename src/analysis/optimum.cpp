// The baseline of a case, its optimal setting for an objective, and the change
// between them.
#include <tuple>

#include "dvfslab/analysis.hpp"

namespace dvfslab {

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

  // Points are in setting order, so the first default (or the first point) is the
  // highest-ranked candidate.
  analysis.baseline = 0;
  analysis.baseline_kind = BaselineKind::highest_setting;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].is_default) {
      analysis.baseline = i;
      analysis.baseline_kind = BaselineKind::vendor_default;
      break;
    }
  }
  const PointSummary& baseline = points[analysis.baseline];

  // Strict comparison in setting order keeps the earliest setting among exact ties.
  std::optional<std::tuple<double, double>> best;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto value = objective_value(objective, points[i], baseline);
    if (!value) continue;
    const std::tuple<double, double> candidate{*value, points[i].time_per_iteration_s.mean};
    if (!best || candidate < *best) {
      best = candidate;
      analysis.optimum = i;
    }
  }
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
