#include "report/figures.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

namespace dvfslab::report_detail {
namespace {

using nlohmann::json;

enum class Knob { sm, mem, power_limit, none };

struct KnobInfo {
  const char* field;
  const char* title;
};

KnobInfo info(Knob knob) {
  switch (knob) {
    case Knob::sm: return {"sm_mhz", "core clock (MHz)"};
    case Knob::mem: return {"mem_mhz", "memory clock (MHz)"};
    case Knob::power_limit: return {"power_limit_w", "power limit (W)"};
    case Knob::none: return {"setting", "setting"};
  }
  return {"setting", "setting"};
}

std::string knob_text(const std::optional<int>& value) { return value ? std::to_string(*value) : "-"; }

// Which knobs vary within a group, and what the charts put on the x axis.
struct GroupShape {
  std::set<int> sm, mem, power_limit, batches;
  Knob primary = Knob::none;
  bool memory_figures = false;  // core and memory clock both varied
};

GroupShape shape_of(const std::vector<const CaseAnalysis*>& cases) {
  GroupShape shape;
  for (const CaseAnalysis* c : cases) {
    shape.batches.insert(c->key.workload_case.batch);
    for (const PointSummary& p : c->points) {
      if (p.setting.sm_mhz) shape.sm.insert(*p.setting.sm_mhz);
      if (p.setting.mem_mhz) shape.mem.insert(*p.setting.mem_mhz);
      if (p.setting.power_limit_w) shape.power_limit.insert(*p.setting.power_limit_w);
    }
  }
  // The first knob that varies; else the first that was controlled at all.
  for (std::size_t minimum : {std::size_t{2}, std::size_t{1}}) {
    if (shape.primary != Knob::none) break;
    if (shape.sm.size() >= minimum)
      shape.primary = Knob::sm;
    else if (shape.power_limit.size() >= minimum)
      shape.primary = Knob::power_limit;
    else if (shape.mem.size() >= minimum)
      shape.primary = Knob::mem;
  }
  shape.memory_figures = shape.primary == Knob::sm && shape.sm.size() >= 2 && shape.mem.size() >= 2;
  return shape;
}

std::string batch_label(int batch) { return batch > 0 ? std::to_string(batch) : "-"; }

// The line a point belongs to: its batch size and every varied knob not on the x axis.
std::string series_label(const GroupShape& shape, int batch, const Setting& s, Knob x) {
  std::string label;
  const auto add = [&label](const std::string& part) { label += (label.empty() ? "" : " · ") + part; };
  if (shape.batches.size() > 1) add("batch " + batch_label(batch));
  if (x != Knob::sm && shape.sm.size() > 1) add("core " + knob_text(s.sm_mhz) + " MHz");
  if (x != Knob::mem && shape.mem.size() > 1) add("mem " + knob_text(s.mem_mhz) + " MHz");
  if (x != Knob::power_limit && shape.power_limit.size() > 1)
    add("limit " + knob_text(s.power_limit_w) + " W");
  return label.empty()
             ? (shape.batches.size() == 1 && batch_label(batch) != "-" ? "batch " + batch_label(batch)
                                                                       : "measured")
             : label;
}

json optional_json(const std::optional<int>& value) { return value ? json(*value) : json(nullptr); }

// Six significant digits: more than any chart or tooltip (".4g") shows, and a
// third of the text of a double written in full.
double rounded(double value) {
  if (value == 0.0 || !std::isfinite(value)) return value;
  return std::strtod(fmt::format("{:.6g}", value).c_str(), nullptr);
}

// Texts repeated across points are written once and referred to by position.
class Labels {
 public:
  int index(const std::string& text) {
    const auto [slot, added] = positions_.try_emplace(text, static_cast<int>(texts_.size()));
    if (added) texts_.push_back(text);
    return slot->second;
  }
  json texts() const { return texts_; }

 private:
  std::map<std::string, int> positions_;
  std::vector<std::string> texts_;
};

json data_columns(const std::vector<const CaseAnalysis*>& cases, const GroupShape& shape,
                  const std::map<std::pair<CaseKey, Setting>, int>& probe_order,
                  const std::map<std::pair<CaseKey, Setting>, PredictedEnergy>& predicted) {
  Labels labels;
  json batch = json::array(), series = json::array(), memory_series = json::array(), sm = json::array(),
       mem = json::array(), power_limit = json::array(), time = json::array(), power = json::array(),
       throughput = json::array(), energy = json::array(), repetitions = json::array(),
       pareto = json::array(), baseline = json::array(), optimum = json::array(), probe = json::array(),
       predicted_value = json::array(), predicted_low = json::array(), predicted_high = json::array();
  bool any_predicted = false;
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
      repetitions.push_back(p.repetitions);
      pareto.push_back(on_frontier[i] ? 1 : 0);
      baseline.push_back(i == c->baseline ? 1 : 0);
      optimum.push_back(c->optimum && i == *c->optimum ? 1 : 0);
      const auto probed = probe_order.find({c->key, p.setting});
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
  // Kept apart from the measured columns, and absent without a model.
  if (any_predicted) {
    data["columns"]["predicted_energy"] = std::move(predicted_value);
    data["columns"]["predicted_energy_low"] = std::move(predicted_low);
    data["columns"]["predicted_energy_high"] = std::move(predicted_high);
  }
  return data;
}

// The model's energy per item: a band for its interval and a dashed line, in grey and
// black so they never read as one of the measured series.
void add_prediction_layers(json& spec, const std::string& label, const char* series_field) {
  const json x = spec["layer"][0]["encoding"]["x"];
  const json only_predicted = json::array({{{"filter", "isValid(datum.predicted)"}}});
  const json series = {{"field", series_field}, {"type", "nominal"}};
  spec["layer"].push_back({{"transform", only_predicted},
                           {"mark", {{"type", "area"}, {"color", "gray"}, {"opacity", 0.25}}},
                           {"encoding",
                            {{"x", x},
                             {"y", {{"field", "predicted_low"}, {"type", "quantitative"}}},
                             {"y2", {{"field", "predicted_high"}}},
                             {"detail", series}}}});
  spec["layer"].push_back({{"transform", only_predicted},
                           {"mark", {{"type", "line"}, {"color", "black"}, {"strokeWidth", 1.5}}},
                           {"encoding",
                            {{"x", x},
                             {"y", {{"field", "predicted"}, {"type", "quantitative"}}},
                             {"detail", series},
                             {"strokeDash",
                              {{"datum", label},
                               {"type", "nominal"},
                               {"title", nullptr},
                               {"scale", {{"range", json::array({json::array({6, 4})})}}}}}}}});
}

struct Units {
  std::string item;  // "image"
  std::string rate;  // "images/s"
};

Units units_of(const std::string& item_unit) {
  if (item_unit.empty()) return {"unit of work", "units of work/s"};
  std::string singular = item_unit;
  if (singular.size() > 1 && singular.back() == 's') singular.pop_back();
  return {singular, item_unit + "/s"};
}

json tooltip() {
  return json::array({{{"field", "setting"}, {"title", "setting (core/mem/limit)"}},
                      {{"field", "batch"}},
                      {{"field", "time_s"}, {"title", "time per iteration (s)"}, {"format", ".4g"}},
                      {{"field", "power_w"}, {"title", "mean power (W)"}, {"format", ".4g"}},
                      {{"field", "throughput"}, {"format", ".4g"}},
                      {{"field", "energy_per_item_j"}, {"title", "energy per item (J)"}, {"format", ".4g"}},
                      {{"field", "repetitions"}}});
}

json axis(const char* field, const std::string& title, bool ordinal = false) {
  json encoding = {{"field", field}, {"type", ordinal ? "ordinal" : "quantitative"}, {"title", title}};
  if (!ordinal) encoding["scale"] = {{"zero", false}};
  return encoding;
}

// The title names the quantity (and SIMULATED data); the subtitle the GPU and workload.
json base_spec(const std::string& title, const std::string& data_name) {
  return {{"title", title}, {"width", 340}, {"height", 220}, {"data", {{"name", data_name}}}};
}

json line_chart(const std::string& title, const std::string& data_name, Knob x, const char* y_field,
                const std::string& y_title, const char* series_field) {
  const KnobInfo knob = info(x);
  json spec = base_spec(title, data_name);
  const json encoding = {{"x", axis(knob.field, knob.title, x == Knob::none)},
                         {"y", axis(y_field, y_title)},
                         {"color", {{"field", series_field}, {"type", "nominal"}, {"title", nullptr}}},
                         {"tooltip", tooltip()}};
  // The line, and the optimum of each case drawn over it as a black diamond.
  spec["layer"] = json::array(
      {{{"mark", {{"type", "line"}, {"point", true}}}, {"encoding", encoding}},
       {{"transform", json::array({{{"filter", "datum.optimum"}}})},
        {"mark",
         {{"type", "point"}, {"shape", "diamond"}, {"size", 110}, {"filled", true}, {"color", "black"}}},
        {"encoding", {{"x", encoding["x"]}, {"y", encoding["y"]}, {"tooltip", tooltip()}}}},
       // A search's probes carry their order number above the point.
       {{"transform", json::array({{{"filter", "isValid(datum.probe)"}}})},
        {"mark", {{"type", "text"}, {"dy", -10}, {"fontSize", 10}, {"color", "black"}}},
        {"encoding", {{"x", encoding["x"]}, {"y", encoding["y"]}, {"text", {{"field", "probe"}}}}}}});
  return spec;
}

json heatmap(const std::string& title, const std::string& data_name, const GroupShape& shape,
             const Units& units) {
  json spec = base_spec(title, data_name);
  spec["mark"] = "rect";
  spec["encoding"] = {
      {"x", axis("sm_mhz", "core clock (MHz)", true)},
      {"y",
       {{"field", "mem_mhz"}, {"type", "ordinal"}, {"title", "memory clock (MHz)"}, {"sort", "descending"}}},
      {"color",
       {{"field", "energy_per_item_j"},
        {"type", "quantitative"},
        {"title", "J per " + units.item},
        {"scale", {{"scheme", "viridis"}}}}},
      {"tooltip", tooltip()}};
  if (shape.batches.size() > 1) {
    spec["encoding"]["facet"] = {{"field", "batch"}, {"type", "nominal"}, {"columns", 3}, {"title", "batch"}};
    spec["width"] = 200;
    spec["height"] = 160;
  }
  return spec;
}

json pareto_chart(const std::string& title, const std::string& data_name, const Units& units) {
  json spec = base_spec(title, data_name);
  const json x = axis("time_s", "time per iteration (s)");
  const json y = axis("energy_per_item_j", "energy per " + units.item + " (J)");
  spec["layer"] =
      json::array({{{"mark", {{"type", "point"}, {"opacity", 0.6}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"color", {{"field", "series"}, {"type", "nominal"}, {"title", nullptr}}},
                      {"tooltip", tooltip()}}}},
                   {{"transform", json::array({{{"filter", "datum.pareto"}}})},
                    {"mark", {{"type", "line"}, {"point", true}, {"color", "black"}, {"strokeWidth", 1.5}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"detail", {{"field", "batch"}, {"type", "nominal"}}},
                      {"order", {{"field", "time_s"}, {"type", "quantitative"}}},
                      {"tooltip", tooltip()}}}}});
  return spec;
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
    const std::string& prediction_label) {
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
    group.data = data_columns(cases, shape, probe_order, predicted);
    const bool has_prediction = group.data["columns"].contains("predicted_energy");
    const std::string versus = std::string(" vs ") + info(shape.primary).title;
    const std::string prefix = group.simulated ? "SIMULATED — " : "";
    const auto add = [&](json spec) {
      spec["title"] = {{"text", prefix + spec["title"].get<std::string>()}, {"subtitle", group.heading}};
      group.figures.push_back({fmt::format("figure-{}", next_id++), std::move(spec)});
    };

    add(line_chart("mean power" + versus, group.data_name, shape.primary, "power_w", "mean power (W)",
                   "series"));
    add(line_chart("throughput" + versus, group.data_name, shape.primary, "throughput", units.rate,
                   "series"));
    json energy_chart = line_chart("energy per " + units.item + versus, group.data_name, shape.primary,
                                   "energy_per_item_j", "energy per " + units.item + " (J)", "series");
    if (has_prediction) add_prediction_layers(energy_chart, prediction_label, "series");
    add(std::move(energy_chart));
    if (shape.memory_figures) {
      add(line_chart("energy per " + units.item + " vs memory clock (MHz)", group.data_name, Knob::mem,
                     "energy_per_item_j", "energy per " + units.item + " (J)", "memory_series"));
      add(heatmap("energy per " + units.item + ", core × memory clock", group.data_name, shape, units));
    }
    add(pareto_chart("time vs energy, Pareto frontier (black)", group.data_name, units));
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace dvfslab::report_detail
