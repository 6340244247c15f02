#include "report/figures.hpp"

#include <fmt/format.h>

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
    if (shape.sm.size() >= minimum) shape.primary = Knob::sm;
    else if (shape.power_limit.size() >= minimum) shape.primary = Knob::power_limit;
    else if (shape.mem.size() >= minimum) shape.primary = Knob::mem;
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
  if (x != Knob::power_limit && shape.power_limit.size() > 1) add("limit " + knob_text(s.power_limit_w) + " W");
  return label.empty() ? (shape.batches.size() == 1 && batch_label(batch) != "-" ? "batch " + batch_label(batch) : "measured")
                       : label;
}

json optional_json(const std::optional<int>& value) { return value ? json(*value) : json(nullptr); }

json data_values(const std::vector<const CaseAnalysis*>& cases, const GroupShape& shape) {
  json values = json::array();
  for (const CaseAnalysis* c : cases) {
    const int batch = c->key.workload_case.batch;
    std::vector<bool> on_frontier(c->points.size(), false);
    for (std::size_t i : c->pareto) on_frontier[i] = true;
    for (std::size_t i = 0; i < c->points.size(); ++i) {
      const PointSummary& p = c->points[i];
      values.push_back({{"batch", batch_label(batch)},
                        {"series", series_label(shape, batch, p.setting, shape.primary)},
                        {"memory_series", series_label(shape, batch, p.setting, Knob::mem)},
                        {"sm_mhz", optional_json(p.setting.sm_mhz)},
                        {"mem_mhz", optional_json(p.setting.mem_mhz)},
                        {"power_limit_w", optional_json(p.setting.power_limit_w)},
                        {"setting", fmt::format("{}/{}/{}", knob_text(p.setting.sm_mhz), knob_text(p.setting.mem_mhz),
                                                knob_text(p.setting.power_limit_w))},
                        {"time_s", p.time_per_iteration_s.mean},
                        {"power_w", p.mean_power_w.mean},
                        {"throughput", p.throughput_items_per_s.mean},
                        {"energy_per_item_j", p.energy_per_item_j.mean},
                        {"repetitions", p.repetitions},
                        {"pareto", on_frontier[i]},
                        {"baseline", i == c->baseline},
                        {"optimum", c->optimum && i == *c->optimum}});
    }
  }
  return values;
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
json base_spec(const std::string& title, const json& values) {
  return {{"title", title},
          {"width", 340},
          {"height", 220},
          {"data", {{"values", values}}}};
}

json line_chart(const std::string& title, const json& values, Knob x, const char* y_field, const std::string& y_title,
                const char* series_field) {
  const KnobInfo knob = info(x);
  json spec = base_spec(title, values);
  const json encoding = {{"x", axis(knob.field, knob.title, x == Knob::none)},
                         {"y", axis(y_field, y_title)},
                         {"color", {{"field", series_field}, {"type", "nominal"}, {"title", nullptr}}},
                         {"tooltip", tooltip()}};
  // The line, and the optimum of each case drawn over it as a black diamond.
  spec["layer"] = json::array(
      {{{"mark", {{"type", "line"}, {"point", true}}}, {"encoding", encoding}},
       {{"transform", json::array({{{"filter", "datum.optimum"}}})},
        {"mark", {{"type", "point"}, {"shape", "diamond"}, {"size", 110}, {"filled", true}, {"color", "black"}}},
        {"encoding", {{"x", encoding["x"]}, {"y", encoding["y"]}, {"tooltip", tooltip()}}}}});
  return spec;
}

json heatmap(const std::string& title, const json& values, const GroupShape& shape, const Units& units) {
  json spec = base_spec(title, values);
  spec["mark"] = "rect";
  spec["encoding"] = {{"x", axis("sm_mhz", "core clock (MHz)", true)},
                      {"y", {{"field", "mem_mhz"}, {"type", "ordinal"}, {"title", "memory clock (MHz)"}, {"sort", "descending"}}},
                      {"color", {{"field", "energy_per_item_j"}, {"type", "quantitative"},
                                 {"title", "J per " + units.item}, {"scale", {{"scheme", "viridis"}}}}},
                      {"tooltip", tooltip()}};
  if (shape.batches.size() > 1) {
    spec["encoding"]["facet"] = {{"field", "batch"}, {"type", "nominal"}, {"columns", 3}, {"title", "batch"}};
    spec["width"] = 200;
    spec["height"] = 160;
  }
  return spec;
}

json pareto_chart(const std::string& title, const json& values, const Units& units) {
  json spec = base_spec(title, values);
  const json x = axis("time_s", "time per iteration (s)");
  const json y = axis("energy_per_item_j", "energy per " + units.item + " (J)");
  spec["layer"] = json::array(
      {{{"mark", {{"type", "point"}, {"opacity", 0.6}}},
        {"encoding", {{"x", x}, {"y", y}, {"color", {{"field", "series"}, {"type", "nominal"}, {"title", nullptr}}},
                      {"tooltip", tooltip()}}}},
       {{"transform", json::array({{{"filter", "datum.pareto"}}})},
        {"mark", {{"type", "line"}, {"point", true}, {"color", "black"}, {"strokeWidth", 1.5}}},
        {"encoding", {{"x", x}, {"y", y}, {"detail", {{"field", "batch"}, {"type", "nominal"}}},
                      {"order", {{"field", "time_s"}, {"type", "quantitative"}}}, {"tooltip", tooltip()}}}}});
  return spec;
}

std::string heading_of(const CaseAnalysis& c, bool show_mode) {
  const Case& wc = c.key.workload_case;
  std::string heading = fmt::format("{} · {}", c.key.gpu, wc.workload);
  if (show_mode) heading += fmt::format(" {} {}", to_string(wc.mode), to_string(wc.precision));
  return heading;
}

}  // namespace

std::vector<FigureGroup> build_figure_groups(const Analysis& analysis) {
  using GroupKey = std::tuple<std::string, std::string, bool, std::string, Mode, Precision>;
  std::map<GroupKey, std::vector<const CaseAnalysis*>> grouped;
  for (const CaseAnalysis& c : analysis.cases) {
    if (c.points.empty()) continue;
    const Case& wc = c.key.workload_case;
    grouped[GroupKey{c.key.source, c.key.gpu, c.key.simulated, wc.workload, wc.mode, wc.precision}].push_back(&c);
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
    const json values = data_values(cases, shape);
    const std::string versus = std::string(" vs ") + info(shape.primary).title;
    const std::string prefix = group.simulated ? "SIMULATED — " : "";
    const auto add = [&](json spec) {
      spec["title"] = {{"text", prefix + spec["title"].get<std::string>()}, {"subtitle", group.heading}};
      group.figures.push_back({fmt::format("figure-{}", next_id++), std::move(spec)});
    };

    add(line_chart("mean power" + versus, values, shape.primary, "power_w", "mean power (W)", "series"));
    add(line_chart("throughput" + versus, values, shape.primary, "throughput", units.rate, "series"));
    add(line_chart("energy per " + units.item + versus, values, shape.primary, "energy_per_item_j",
                   "energy per " + units.item + " (J)", "series"));
    if (shape.memory_figures) {
      add(line_chart("energy per " + units.item + " vs memory clock (MHz)", values, Knob::mem,
                     "energy_per_item_j", "energy per " + units.item + " (J)", "memory_series"));
      add(heatmap("energy per " + units.item + ", core × memory clock", values, shape, units));
    }
    add(pareto_chart("time vs energy, Pareto frontier (black)", values, units));
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace dvfslab::report_detail
