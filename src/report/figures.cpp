#include "report/figures.hpp"

#include <fmt/format.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "report/charts.hpp"
#include "report/figure_data.hpp"
#include "report/figure_shape.hpp"
#include "report/markers.hpp"

namespace dvfslab::report_detail {
namespace {

using nlohmann::json;

Units units_of(const std::string& item_unit) {
  if (item_unit.empty()) return {"unit of work", "units of work/s"};
  std::string singular = item_unit;
  if (singular.size() > 1 && singular.back() == 's') singular.pop_back();
  return {singular, item_unit + "/s"};
}

std::string heading_of(const CaseAnalysis& c, bool show_mode) {
  const Case& wc = c.key.workload_case;
  std::string heading = fmt::format("{} · {}", c.key.gpu, wc.workload);
  if (show_mode) heading += fmt::format(" {} {}", to_string(wc.mode), to_string(wc.precision));
  return heading;
}

}  // namespace

std::vector<FigureGroup> build_figure_groups(
    const Analysis& analysis, const std::map<std::pair<CaseKey, Setting>, int>& probe_order,
    const std::map<std::pair<CaseKey, Setting>, PredictedEnergy>& predicted,
    const std::string& prediction_label, const std::map<std::pair<CaseKey, Setting>, double>& measured_sm_mhz,
    const std::map<std::pair<CaseKey, Setting>, double>& measured_mem_mhz) {
  const MeasuredClocks measured{measured_sm_mhz, measured_mem_mhz};
  using GroupKey = std::tuple<std::string, std::string, bool, std::string, Mode, Precision>;
  std::map<GroupKey, std::vector<const CaseAnalysis*>> grouped;
  for (const CaseAnalysis& c : analysis.cases) {
    if (c.points.empty()) continue;
    const Case& wc = c.key.workload_case;
    grouped[GroupKey{c.key.source, c.key.gpu, c.key.simulated, wc.workload, wc.mode, wc.precision}].push_back(
        &c);
  }

  std::vector<FigureGroup> groups;
  int next_id = 0;
  for (auto& [key, cases] : grouped) {
    FigureGroup group;
    group.cases = cases;
    group.simulated = cases.front()->key.simulated;
    const GroupShape shape = shape_of(cases);
    // Sweep tables carry no batch, mode or precision (batch 0): naming a mode would invent one.
    const bool show_mode = !(shape.batches.size() == 1 && *shape.batches.begin() == 0);
    group.heading = heading_of(*cases.front(), show_mode);
    const Units units = units_of(cases.front()->item_unit);
    group.data_name = fmt::format("group-{}", groups.size());
    group.data = data_columns(cases, shape, probe_order, predicted, measured);
    const bool has_prediction = group.data["columns"].contains("predicted_energy");
    const std::string versus = std::string(" vs ") + info(shape.primary).title;
    const std::string prefix = group.simulated ? "SIMULATED — " : "";
    const auto add = [&](json spec) {
      spec["title"] = {{"text", prefix + spec["title"].get<std::string>()}, {"subtitle", group.heading}};
      group.figures.push_back({fmt::format("figure-{}", next_id++), std::move(spec)});
    };

    const SeriesStyle series = series_style(cases, shape, shape.primary);
    add(line_chart("mean power" + versus, group.data_name, shape.primary, "power_w", "mean power (W)",
                   "series", series));
    add(line_chart("throughput" + versus, group.data_name, shape.primary, "throughput", units.rate, "series",
                   series));
    json energy_chart =
        line_chart("energy per " + units.item + versus, group.data_name, shape.primary, "energy_per_item_j",
                   "energy per " + units.item + " (J)", "series", series);
    if (has_prediction) add_prediction_layers(energy_chart, prediction_label, "series");
    add(std::move(energy_chart));
    if (shape.memory_figures) {
      add(line_chart("energy per " + units.item + " vs memory clock (MHz)", group.data_name, Knob::mem,
                     "energy_per_item_j", "energy per " + units.item + " (J)", "memory_series",
                     series_style(cases, shape, Knob::mem)));
      add(heatmap("energy per " + units.item + ", core × memory clock", group.data_name, shape, units));
    }
    add(pareto_chart("time vs energy, Pareto frontier (black)", group.data_name, units, series));
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace dvfslab::report_detail
