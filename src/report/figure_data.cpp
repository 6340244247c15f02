#include "report/figure_data.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>

#include "report/axis_range.hpp"
#include "report/compact_values.hpp"

namespace dvfslab::report_detail {
namespace {

using nlohmann::json;

json optional_json(const std::optional<int>& value) { return value ? json(*value) : json(nullptr); }


// The half-widths of the 95 % confidence intervals of the plotted means, one column
// per metric ("<metric>_ci"), null where a point has fewer than two repetitions.
class IntervalColumns {
 public:
  void add(const PointSummary& p) {
    for (const auto& [column, estimate] : metrics(p)) {
      const auto& half_width = estimate->ci95_half_width;
      columns_[column].push_back(half_width ? json(rounded(*half_width)) : json(nullptr));
      any_ = any_ || half_width.has_value();
    }
  }
  // Absent where no point has an interval (a sweep table's single measurements).
  void move_into(json& columns) {
    if (!any_) return;
    for (auto& [column, values] : columns_) columns[column + "_ci"] = std::move(values);
  }

 private:
  static std::array<std::pair<std::string, const Estimate*>, 4> metrics(const PointSummary& p) {
    return {{{"time_s", &p.time_per_iteration_s},
             {"power_w", &p.mean_power_w},
             {"throughput", &p.throughput_items_per_s},
             {"energy_per_item_j", &p.energy_per_item_j}}};
  }
  std::map<std::string, json> columns_;
  bool any_ = false;
};

}  // namespace

json data_columns(const std::vector<const CaseAnalysis*>& cases, const GroupShape& shape,
                  const std::map<std::pair<CaseKey, Setting>, int>& probe_order,
                  const std::map<std::pair<CaseKey, Setting>, PredictedEnergy>& predicted,
                  const MeasuredClocks& measured) {
  Labels labels;
  const std::optional<AxisRange> range = readable_range(cases, shape.primary, measured);
  json marker_sm = json::array();
  json marker_mem = json::array();
  bool any_measured_marker = false, any_measured_memory_marker = false;
  json outside = json::array();
  std::set<int> outside_values;
  bool all_outside_probed = true;
  json batch = json::array(), series = json::array(), memory_series = json::array(), sm = json::array(),
       mem = json::array(), power_limit = json::array(), time = json::array(), power = json::array(),
       throughput = json::array(), energy = json::array(), repetitions = json::array(),
       pareto = json::array(), baseline = json::array(), optimum = json::array(), probe = json::array(),
       predicted_value = json::array(), predicted_low = json::array(), predicted_high = json::array();
  bool any_predicted = false;
  IntervalColumns intervals;
  for (const CaseAnalysis* c : cases) {
    const int batch_size = c->key.workload_case.batch;
    std::vector<bool> on_frontier(c->points.size(), false);
    for (std::size_t i : c->pareto) on_frontier[i] = true;
    for (std::size_t i = 0; i < c->points.size(); ++i) {
      const PointSummary& p = c->points[i];
      batch.push_back(labels.index(batch_label(batch_size)));
      series.push_back(labels.index(series_label(shape, batch_size, p.setting, shape.primary)));
      memory_series.push_back(labels.index(series_label(shape, batch_size, p.setting, Knob::mem)));
      sm.push_back(optional_json(p.setting.sm_mhz));
      mem.push_back(optional_json(p.setting.mem_mhz));
      power_limit.push_back(optional_json(p.setting.power_limit_w));
      time.push_back(rounded(p.time_per_iteration_s.mean));
      power.push_back(rounded(p.mean_power_w.mean));
      throughput.push_back(rounded(p.throughput_items_per_s.mean));
      energy.push_back(rounded(p.energy_per_item_j.mean));
      intervals.add(p);
      repetitions.push_back(p.repetitions);
      pareto.push_back(on_frontier[i] ? 1 : 0);
      baseline.push_back(i == c->baseline ? 1 : 0);
      optimum.push_back(c->optimum && i == *c->optimum ? 1 : 0);
      const auto probed = probe_order.find({c->key, p.setting});
      const auto x = knob_value(p.setting, shape.primary);
      const bool is_outside = range && x && !range->contains(*x);
      const auto marker_x = marker_position(*c, p, Knob::sm, measured);
      any_measured_marker = any_measured_marker || (marker_x && !p.setting.sm_mhz);
      marker_sm.push_back(marker_x ? json(rounded(*marker_x)) : json(nullptr));
      const auto marker_memory = marker_position(*c, p, Knob::mem, measured);
      any_measured_memory_marker = any_measured_memory_marker || (marker_memory && !p.setting.mem_mhz);
      marker_mem.push_back(marker_memory ? json(rounded(*marker_memory)) : json(nullptr));
      outside.push_back(is_outside ? 1 : 0);
      if (is_outside) {
        outside_values.insert(*x);
        all_outside_probed = all_outside_probed && probed != probe_order.end();
      }
      probe.push_back(probed == probe_order.end() ? json(nullptr) : json(probed->second));
      const auto prediction = predicted.find({c->key, p.setting});
      const bool has_prediction = prediction != predicted.end();
      any_predicted = any_predicted || has_prediction;
      predicted_value.push_back(has_prediction ? json(rounded(prediction->second.value)) : json(nullptr));
      predicted_low.push_back(has_prediction ? json(rounded(prediction->second.low)) : json(nullptr));
      predicted_high.push_back(has_prediction ? json(rounded(prediction->second.high)) : json(nullptr));
    }
  }
  json data = {{"labels", labels.texts()},
               {"columns",
                {{"batch", std::move(batch)},
                 {"series", std::move(series)},
                 {"memory_series", std::move(memory_series)},
                 {"sm_mhz", std::move(sm)},
                 {"mem_mhz", std::move(mem)},
                 {"power_limit_w", std::move(power_limit)},
                 {"time_s", std::move(time)},
                 {"power_w", std::move(power)},
                 {"throughput", std::move(throughput)},
                 {"energy_per_item_j", std::move(energy)},
                 {"repetitions", std::move(repetitions)},
                 {"pareto", std::move(pareto)},
                 {"baseline", std::move(baseline)},
                 {"optimum", std::move(optimum)},
                 {"probe", std::move(probe)}}}};
  intervals.move_into(data["columns"]);
  // Kept apart from the measured columns, and absent without a model.
  if (any_predicted) {
    data["columns"]["predicted_energy"] = std::move(predicted_value);
    data["columns"]["predicted_energy_low"] = std::move(predicted_low);
    data["columns"]["predicted_energy_high"] = std::move(predicted_high);
  }
  // Absent where every point set its core clock: then the markers stand at sm_mhz.
  if (any_measured_marker) data["columns"]["marker_sm_mhz"] = std::move(marker_sm);
  // Likewise for the memory clock's markers and mem_mhz.
  if (any_measured_memory_marker) data["columns"]["marker_mem_mhz"] = std::move(marker_mem);
  // Also absent where every point is on the axes; the note rides on the first point.
  if (!outside_values.empty()) {
    json note = json::array();
    note.push_back(labels.index(clip_note_text(outside_values, all_outside_probed, shape.primary)));
    for (std::size_t i = 1; i < outside.size(); ++i) note.push_back(nullptr);
    data["labels"] = labels.texts();
    data["columns"]["outside"] = std::move(outside);
    data["columns"]["clip_note"] = std::move(note);
  }
  return data;
}

}  // namespace dvfslab::report_detail
