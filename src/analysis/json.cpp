// The JSON contract of `dvfslab analyze --json` (docs/analysis.md): knobs that were
// not controlled and values that do not exist are null, never 0 or -1.
#include <nlohmann/json.hpp>

#include "dvfslab/analysis.hpp"
#include "dvfslab/json_optional.hpp"

namespace dvfslab {
namespace {

using nlohmann::json;

json setting_json(const Setting& setting) {
  return {{"sm_mhz", or_null(setting.sm_mhz)},
          {"mem_mhz", or_null(setting.mem_mhz)},
          {"power_limit_w", or_null(setting.power_limit_w)},
          {"workload_profile", profile_or_null(setting.workload_profile)}};
}

json estimate_json(const Estimate& value) {
  return {{"mean", value.mean}, {"ci95", or_null(value.ci95_half_width)}};
}

json point_json(const PointSummary& point) {
  return {{"setting", setting_json(point.setting)},
          {"default", point.is_default},
          {"repetitions", point.repetitions},
          {"time_per_iteration_s", estimate_json(point.time_per_iteration_s)},
          {"throughput_items_per_s", estimate_json(point.throughput_items_per_s)},
          {"mean_power_w", estimate_json(point.mean_power_w)},
          {"energy_per_iteration_j", estimate_json(point.energy_per_iteration_j)},
          {"energy_per_item_j", estimate_json(point.energy_per_item_j)},
          {"edp_j_s", estimate_json(point.edp_j_s)},
          {"ed2p_j_s2", estimate_json(point.ed2p_j_s2)},
          {"sm_mhz_mean", or_null(point.sm_mhz_mean)},
          {"flags", point.flags.names()}};
}

// The headline numbers of one setting, so a reader needs no per-point list.
json brief_json(const PointSummary& point) {
  json out = setting_json(point.setting);
  out["time_per_iteration_s"] = point.time_per_iteration_s.mean;
  out["mean_power_w"] = point.mean_power_w.mean;
  out["energy_per_item_j"] = point.energy_per_item_j.mean;
  out["throughput_items_per_s"] = point.throughput_items_per_s.mean;
  return out;
}

json case_json(const CaseAnalysis& c, bool include_points) {
  const Case& wc = c.key.workload_case;
  json out = {{"source", c.key.source},
              {"gpu", c.key.gpu},
              {"workload", wc.workload},
              {"batch", wc.batch > 0 ? json(wc.batch) : json(nullptr)},
              {"mode", to_string(wc.mode)},
              {"precision", to_string(wc.precision)},
              {"simulated", c.key.simulated},
              {"item_unit", c.item_unit},
              {"settings", c.points.size()},
              {"baseline_kind", to_string(c.baseline_kind)},
              {"baseline", brief_json(c.points[c.baseline])},
              {"optimum", c.optimum ? brief_json(c.points[*c.optimum]) : json(nullptr)},
              {"energy_saving_pct", or_null(c.energy_saving_pct)},
              {"time_change_pct", or_null(c.time_change_pct)},
              {"power_change_pct", or_null(c.power_change_pct)}};
  json pareto = json::array();
  for (std::size_t i : c.pareto) pareto.push_back(brief_json(c.points[i]));
  out["pareto"] = std::move(pareto);
  if (!c.profiles.empty()) {
    json profiles = json::array();
    for (const ProfileComparison& p : c.profiles) {
      json entry = brief_json(c.points[p.point]);
      entry["energy_saving_pct"] = p.energy_saving_pct;
      entry["time_change_pct"] = p.time_change_pct;
      entry["tuned_energy_saving_pct"] = or_null(p.tuned_energy_saving_pct);
      entry["tuned_time_change_pct"] = or_null(p.tuned_time_change_pct);
      profiles.push_back(std::move(entry));
    }
    out["profiles"] = std::move(profiles);
    out["tuned_optimum"] = c.tuned_optimum ? brief_json(c.points[*c.tuned_optimum]) : json(nullptr);
  }
  if (include_points) {
    json points = json::array();
    for (const PointSummary& point : c.points) points.push_back(point_json(point));
    out["points"] = std::move(points);
  }
  return out;
}

json ratio_means_json(const RatioMeans& means) {
  return {{"cases", means.cases},
          {"energy_saving_pct", means.energy_saving_pct},
          {"time_change_pct", means.time_change_pct},
          {"power_change_pct", means.power_change_pct}};
}

}  // namespace

json to_json(const Analysis& analysis, bool include_points) {
  json cases = json::array();
  for (const CaseAnalysis& c : analysis.cases) {
    if (!c.points.empty()) cases.push_back(case_json(c, include_points));
  }
  json workloads = json::array();
  for (const WorkloadAggregate& w : analysis.workloads) {
    workloads.push_back({{"source", w.source},
                         {"gpu", w.gpu},
                         {"simulated", w.simulated},
                         {"workload", w.workload},
                         {"mode", to_string(w.mode)},
                         {"precision", to_string(w.precision)},
                         {"batches", w.batches},
                         {"geomean_across_batches", ratio_means_json(w.across_batches)}});
  }
  json summary = json::array();
  for (const GpuModeSummary& s : analysis.summary) {
    summary.push_back({{"source", s.source},
                       {"gpu", s.gpu},
                       {"simulated", s.simulated},
                       {"mode", to_string(s.mode)},
                       {"cases", s.cases},
                       {"cases_without_optimum", s.cases_without_optimum},
                       {"workloads", s.workloads},
                       {"energy_saving_min_pct", or_null(s.energy_saving_min_pct)},
                       {"energy_saving_max_pct", or_null(s.energy_saving_max_pct)},
                       {"geomean_across_workloads",
                        s.across_workloads ? ratio_means_json(*s.across_workloads) : json(nullptr)}});
  }
  return {{"objective", to_string(analysis.objective)},
          {"cases", std::move(cases)},
          {"workloads", std::move(workloads)},
          {"summary", std::move(summary)}};
}

}  // namespace dvfslab
