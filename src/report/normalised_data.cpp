#include "report/normalised_data.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>

#include "report/axis_range.hpp"
#include "report/compact_values.hpp"

namespace dvfslab::report_detail {
namespace {

using nlohmann::json;


// Sweep tables carry no batch size, mode or precision: naming them would invent them.
bool has_case_details(const CaseAnalysis& c) { return c.key.workload_case.batch > 0; }

std::string series_of(const CaseAnalysis& c) {
  const Case& wc = c.key.workload_case;
  return has_case_details(c) ? fmt::format("{} · batch {}", to_string(wc.mode), wc.batch) : "measured";
}

json optional_number(const std::optional<double>& value) {
  return value ? json(rounded(*value)) : json(nullptr);
}

}  // namespace

std::string network_label(const CaseAnalysis& c) {
  const Case& wc = c.key.workload_case;
  return has_case_details(c) ? fmt::format("{} {}", wc.workload, to_string(wc.precision)) : wc.workload;
}

std::string case_label(const CaseAnalysis& c) {
  const Case& wc = c.key.workload_case;
  return has_case_details(c) ? fmt::format("{} {} {} · batch {}", wc.workload, to_string(wc.mode),
                                           to_string(wc.precision), wc.batch)
                             : wc.workload;
}

NormalisedData normalised_data(const std::vector<const CaseAnalysis*>& gpu_cases,
                               const MeasuredClocks& measured,
                               const std::map<std::pair<CaseKey, Setting>, int>& probe_order) {
  NormalisedData out;
  std::map<std::string, std::vector<const CaseAnalysis*>> networks;
  for (const CaseAnalysis* c : gpu_cases) {
    // A case measured at one setting only (a real GPU without clock control) is its
    // default: 1.0 everywhere, nothing to show.
    if (c->points.size() < 2) continue;
    if (c->baseline_kind != BaselineKind::vendor_default) {
      out.left_out.push_back(case_label(*c));
      continue;
    }
    out.cases.push_back(c);
    networks[network_label(*c)].push_back(c);
  }
  std::map<std::string, std::optional<AxisRange>> ranges;
  for (const auto& [network, cases] : networks) {
    const Knob knob = shape_of(cases).primary;
    out.network_knob[network] = knob;
    ranges[network] = readable_range(cases, knob, measured);
  }

  Labels labels;
  std::map<std::string, json> columns;
  std::map<std::string, bool> has_interval;
  std::map<std::string, std::set<int>> outside_per_network;
  std::set<int> outside_on_gpu;
  bool all_outside_probed = true;
  std::map<std::string, std::size_t> first_of_network;
  std::vector<std::pair<std::size_t, std::set<int>>> case_notes;
  std::size_t row = 0;
  for (const CaseAnalysis* c : out.cases) {
    const std::string network = network_label(*c);
    const Knob knob = out.network_knob[network];
    const PointSummary& default_point = c->points[c->baseline];
    std::set<int> outside_in_case;
    const std::size_t first_row = row;
    first_of_network.try_emplace(network, row);
    for (std::size_t i = 0; i < c->points.size(); ++i, ++row) {
      const PointSummary& p = c->points[i];
      columns["case"].push_back(labels.index(case_label(*c)));
      columns["network"].push_back(labels.index(network));
      columns["series"].push_back(labels.index(series_of(*c)));
      const auto x = knob_value(p.setting, knob);
      columns["x"].push_back(x ? json(*x) : json(nullptr));
      columns["marker_x"].push_back(optional_number(marker_position(*c, p, knob, measured)));
      // Each metric over the same metric at this case's own default, never another case's.
      for (const auto& [name, value, reference] :
           {std::tuple{"energy_ratio", &p.energy_per_item_j, &default_point.energy_per_item_j},
            std::tuple{"time_ratio", &p.time_per_iteration_s, &default_point.time_per_iteration_s},
            std::tuple{"power_ratio", &p.mean_power_w, &default_point.mean_power_w}}) {
        columns[name].push_back(rounded(value->mean / reference->mean));
        const auto& half_width = value->ci95_half_width;
        columns[std::string(name) + "_ci"].push_back(half_width ? json(rounded(*half_width / reference->mean))
                                                                : json(nullptr));
        has_interval[name] = has_interval[name] || half_width.has_value();
      }
      columns["baseline"].push_back(i == c->baseline ? 1 : 0);
      columns["optimum"].push_back(c->optimum && i == *c->optimum ? 1 : 0);
      columns["pareto"].push_back(0);
      const bool is_outside = ranges[network] && x && !ranges[network]->contains(*x);
      columns["outside"].push_back(is_outside ? 1 : 0);
      if (is_outside) {
        all_outside_probed = all_outside_probed && probe_order.contains({c->key, p.setting});
        outside_in_case.insert(*x);
        outside_per_network[network].insert(*x);
        outside_on_gpu.insert(*x);
      }
    }
    for (std::size_t i : c->pareto) columns["pareto"][first_row + i] = 1;
    if (!outside_in_case.empty()) case_notes.emplace_back(first_row, outside_in_case);
  }
  for (const auto& [name, any] : has_interval) {
    if (!any) columns.erase(std::string(name) + "_ci");
  }
  json label_columns = json::array({"case", "network", "series"});
  // The notes ride on the first point of the figure that leaves points out: the case's,
  // the network's and the GPU's (its Pareto figure), so a figure's selection keeps its own.
  const auto add_notes = [&](const char* column,
                             const std::vector<std::pair<std::size_t, std::string>>& notes) {
    if (notes.empty()) return;
    json values(row, nullptr);
    for (const auto& [at, text] : notes) values[at] = labels.index(text);
    columns[column] = std::move(values);
    label_columns.push_back(column);
  };
  std::vector<std::pair<std::size_t, std::string>> network_notes, case_note_texts, gpu_notes;
  for (const auto& [network, values] : outside_per_network)
    network_notes.emplace_back(first_of_network[network],
                               clip_note_text(values, all_outside_probed, out.network_knob[network]));
  for (const auto& [at, values] : case_notes) {
    const std::string network = labels.texts()[columns["network"][at].get<int>()];
    case_note_texts.emplace_back(at, clip_note_text(values, all_outside_probed, out.network_knob[network]));
  }
  if (!outside_on_gpu.empty()) {
    const Knob knob = out.network_knob.begin()->second;
    gpu_notes.emplace_back(0, clip_note_text(outside_on_gpu, all_outside_probed, knob));
  }
  add_notes("network_clip_note", network_notes);
  add_notes("case_clip_note", case_note_texts);
  add_notes("gpu_clip_note", gpu_notes);
  if (outside_on_gpu.empty()) columns.erase("outside");
  out.data = {{"labels", labels.texts()}, {"columns", columns}, {"label_columns", std::move(label_columns)}};
  return out;
}

namespace {

std::string gpu_label(const WorkloadAggregate& w) { return (w.simulated ? "SIMULATED " : "") + w.gpu; }

}  // namespace

std::optional<std::string> summary_gpu(const Analysis& analysis) {
  std::optional<std::string> only;  // as gpu_label, so a real GPU and its twin differ
  std::string name;
  for (const WorkloadAggregate& w : analysis.workloads) {
    if (w.across_batches.cases == 0) continue;
    if (only && *only != gpu_label(w)) return std::nullopt;
    only = gpu_label(w);
    name = w.gpu;
  }
  if (!only) return std::nullopt;
  return name;
}

json summary_data(const Analysis& analysis) {
  const bool one_gpu = summary_gpu(analysis).has_value();
  Labels labels;
  json row = json::array(), mode = json::array(), saving = json::array(), slowdown = json::array(),
       cases = json::array();
  for (const WorkloadAggregate& w : analysis.workloads) {
    if (w.across_batches.cases == 0) continue;
    const bool details = !(w.batches.size() == 1 && w.batches.front() == 0);
    const std::string network =
        details ? fmt::format("{} {}", w.workload, to_string(w.precision)) : w.workload;
    const std::string mode_text = details ? fmt::format(" · {}", to_string(w.mode)) : "";
    row.push_back(labels.index(one_gpu ? network + mode_text
                                       : fmt::format("{} · {}{}", gpu_label(w), network, mode_text)));
    mode.push_back(labels.index(details ? std::string(to_string(w.mode)) : "-"));
    saving.push_back(rounded(w.across_batches.energy_saving_pct));
    slowdown.push_back(rounded(w.across_batches.time_change_pct));
    cases.push_back(w.across_batches.cases);
  }
  return {{"labels", labels.texts()},
          {"columns",
           {{"row", std::move(row)},
            {"mode", std::move(mode)},
            {"energy_saving_pct", std::move(saving)},
            {"slowdown_pct", std::move(slowdown)},
            {"cases", std::move(cases)}}},
          {"label_columns", json::array({"row", "mode"})}};
}

}  // namespace dvfslab::report_detail
