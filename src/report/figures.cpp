#include "report/figures.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

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
  // A knob left uncontrolled has no number to show: "mem not set", not "mem - MHz".
  const auto knob_part = [](const char* name, const std::optional<int>& value, const char* unit) {
    return value ? fmt::format("{} {} {}", name, *value, unit) : fmt::format("{} not set", name);
  };
  if (x != Knob::sm && shape.sm.size() > 1) add(knob_part("core", s.sm_mhz, "MHz"));
  if (x != Knob::mem && shape.mem.size() > 1) add(knob_part("mem", s.mem_mhz, "MHz"));
  if (x != Knob::power_limit && shape.power_limit.size() > 1) add(knob_part("limit", s.power_limit_w, "W"));
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

std::optional<int> knob_value(const Setting& s, Knob knob) {
  switch (knob) {
    case Knob::sm: return s.sm_mhz;
    case Knob::mem: return s.mem_mhz;
    case Knob::power_limit: return s.power_limit_w;
    case Knob::none: return std::nullopt;
  }
  return std::nullopt;
}

using MeasuredClocks = std::map<std::pair<CaseKey, Setting>, double>;

// Where a point's marker goes on the x knob's axis: its setting, or for a core clock
// left uncontrolled, the clock measured there.
std::optional<double> marker_position(const CaseAnalysis& c, const PointSummary& p, Knob x,
                                      const MeasuredClocks& measured) {
  if (const auto value = knob_value(p.setting, x)) return *value;
  if (x != Knob::sm) return std::nullopt;
  const auto found = measured.find({c.key, p.setting});
  return found == measured.end() ? std::nullopt : std::optional<double>(found->second);
}

// The value at quantile q of sorted values, interpolated linearly between neighbours.
double quantile(const std::vector<int>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

// The range of the x knob a reader needs, by Tukey's rule for "far out" values
// (the box plot's convention, not a constant fitted to a data set): the core spans
// the middle half of the group's settings (the first to the third quartile of their
// distinct knob values) widened to every case's default and optimum, and the axis
// reaches three interquartile ranges beyond it on either side. An evenly spaced
// sweep keeps every point (its interquartile range is half its range), the
// defaults and optima are always shown, and only a setting far from the rest (a
// search's first probe at the lowest clock, below the valley it then finds, at many
// times the valley's energy and time) is left outside, so that it cannot squeeze
// the valley into a corner.
struct AxisRange {
  double low = 0, high = 0;
  bool contains(int value) const { return value >= low && value <= high; }
};

std::optional<AxisRange> readable_range(const std::vector<const CaseAnalysis*>& cases, Knob x,
                                        const MeasuredClocks& measured) {
  std::set<int> distinct;
  std::vector<double> needed;
  for (const CaseAnalysis* c : cases) {
    for (const PointSummary& p : c->points) {
      if (const auto value = knob_value(p.setting, x)) distinct.insert(*value);
    }
    if (const auto value = marker_position(*c, c->points[c->baseline], x, measured)) needed.push_back(*value);
    if (c->optimum) {
      if (const auto value = marker_position(*c, c->points[*c->optimum], x, measured))
        needed.push_back(*value);
    }
  }
  if (distinct.size() < 3) return std::nullopt;
  const std::vector<int> sorted(distinct.begin(), distinct.end());
  const double first_quartile = quantile(sorted, 0.25), third_quartile = quantile(sorted, 0.75);
  AxisRange core{first_quartile, third_quartile};
  for (double value : needed) {
    core.low = std::min(core.low, value);
    core.high = std::max(core.high, value);
  }
  const double fence = 3 * (third_quartile - first_quartile);
  return AxisRange{core.low - fence, core.high + fence};
}

// "1 probe outside the axis: 135 MHz": the note every chart that leaves points out carries.
std::string clip_note_text(const std::set<int>& values, bool all_probes, Knob x) {
  std::vector<std::string> listed;
  for (int value : values) listed.push_back(std::to_string(value));
  const std::size_t count = values.size();
  return fmt::format("{} {}{} outside the axis: {} {}", count, all_probes ? "probe" : "setting",
                     count == 1 ? "" : "s", fmt::join(listed, ", "), x == Knob::power_limit ? "W" : "MHz");
}

json data_columns(const std::vector<const CaseAnalysis*>& cases, const GroupShape& shape,
                  const std::map<std::pair<CaseKey, Setting>, int>& probe_order,
                  const std::map<std::pair<CaseKey, Setting>, PredictedEnergy>& predicted,
                  const MeasuredClocks& measured) {
  Labels labels;
  const std::optional<AxisRange> range = readable_range(cases, shape.primary, measured);
  json marker_sm = json::array();
  bool any_measured_marker = false;
  json outside = json::array();
  std::set<int> outside_values;
  bool all_outside_probed = true;
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
      const auto x = knob_value(p.setting, shape.primary);
      const bool is_outside = range && x && !range->contains(*x);
      const auto marker_x = marker_position(*c, p, Knob::sm, measured);
      any_measured_marker = any_measured_marker || (marker_x && !p.setting.sm_mhz);
      marker_sm.push_back(marker_x ? json(rounded(*marker_x)) : json(nullptr));
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
  // Kept apart from the measured columns, and absent without a model.
  if (any_predicted) {
    data["columns"]["predicted_energy"] = std::move(predicted_value);
    data["columns"]["predicted_energy_low"] = std::move(predicted_low);
    data["columns"]["predicted_energy_high"] = std::move(predicted_high);
  }
  // Absent where every point set its core clock: then the markers stand at sm_mhz.
  if (any_measured_marker) data["columns"]["marker_sm_mhz"] = std::move(marker_sm);
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

// Thinned tick labels: Vega hides every label that would overlap its neighbour, so a
// dense ordinal axis (110 clocks) keeps a readable subset.
json thinned_axis() { return {{"labelOverlap", "greedy"}, {"labelSeparation", 4}}; }

json axis(const char* field, const std::string& title, bool ordinal = false) {
  json encoding = {{"field", field},
                   {"type", ordinal ? "ordinal" : "quantitative"},
                   {"title", title},
                   {"axis", thinned_axis()}};
  if (!ordinal) encoding["scale"] = {{"zero", false}};
  return encoding;
}

// The title names the quantity (and SIMULATED data); the subtitle the GPU and workload.
json base_spec(const std::string& title, const std::string& data_name) {
  return {{"title", title}, {"width", 340}, {"height", 220}, {"data", {{"name", data_name}}}};
}

const json kInView = {{"filter", "!datum.outside"}};

// How lines are coloured. Up to the ten colours of the default palette, one colour
// per series, the legend in numeric order (the page's script ranks the labels
// "batch 128" < "batch 1024" into <series>_rank). More series than colours cannot
// be told apart by colour: then the colour is the knob that tells them apart
// (a core clock), on a continuous scale with one gradient legend.
constexpr std::size_t kPaletteColours = 10;

json series_colour(const char* series_field, std::size_t series_count, std::optional<Knob> series_knob) {
  if (series_count > kPaletteColours && series_knob) {
    return {{"field", info(*series_knob).field},
            {"type", "quantitative"},
            {"title", info(*series_knob).title},
            {"scale", {{"scheme", "viridis"}}}};
  }
  return {{"field", series_field},
          {"type", "nominal"},
          {"title", nullptr},
          {"sort", {{"field", std::string(series_field) + "_rank"}, {"op", "min"}}}};
}

// The default setting (each case's baseline) as an open square and the optimum as a
// filled diamond inside it, in their own layers with one legend, so both show where
// they are the same setting.
json marker_layers(const json& x, const json& y) {
  const json shapes = {{"domain", json::array({"default", "optimum"})},
                       {"range", json::array({"square", "diamond"})}};
  const auto marker = [&](const char* name, const char* kind, const char* filter, bool filled, int size) {
    return json{{"name", name},
                {"transform", json::array({{{"filter", filter}}})},
                {"mark",
                 {{"type", "point"},
                  {"filled", filled},
                  {"size", size},
                  {"strokeWidth", 2},
                  {"color", "black"},
                  {"opacity", 1}}},
                {"encoding",
                 {{"x", x},
                  {"y", y},
                  {"shape", {{"datum", kind}, {"type", "nominal"}, {"title", nullptr}, {"scale", shapes}}},
                  {"tooltip", tooltip()}}}};
  };
  return {{"layer", json::array({marker("default_marker", "default", "datum.baseline", false, 260),
                                 marker("optimum_marker", "optimum", "datum.optimum", true, 90)})}};
}

// The note naming the points left off the axes (readable_range); drawn in the
// chart's top right corner, never left out silently.
json clip_note_layer() {
  return {{"name", "clip_note"},
          {"transform", json::array({{{"filter", "isValid(datum.clip_note)"}}})},
          {"mark",
           {{"type", "text"},
            {"align", "right"},
            {"baseline", "top"},
            {"x", {{"expr", "width - 4"}}},
            {"y", 4},
            {"fontSize", 10},
            {"color", "#b00020"}}},
          {"encoding", {{"text", {{"field", "clip_note"}}}}}};
}

struct SeriesStyle {
  std::size_t count = 0;
  std::optional<Knob> knob;  // the knob that tells the series apart, if any
};

json line_chart(const std::string& title, const std::string& data_name, Knob x, const char* y_field,
                const std::string& y_title, const char* series_field, const SeriesStyle& series) {
  const KnobInfo knob = info(x);
  json spec = base_spec(title, data_name);
  const json encoding = {{"x", axis(knob.field, knob.title, x == Knob::none)},
                         {"y", axis(y_field, y_title)},
                         {"color", series_colour(series_field, series.count, series.knob)},
                         {"detail", {{"field", series_field}, {"type", "nominal"}}},
                         {"tooltip", tooltip()}};
  // A default left uncontrolled has no core clock of its own: its marker stands at
  // the clock measured there (marker_sm_mhz).
  json marker_x = encoding["x"];
  if (x == Knob::sm) marker_x["field"] = "marker_sm_mhz";
  // The lines; the default and optimum markers; the labels: a search's probes carry
  // their order number above the point, and points off the axes are named.
  spec["layer"] = json::array(
      {{{"transform", json::array({kInView})},
        {"mark", {{"type", "line"}, {"point", true}}},
        {"encoding", encoding}},
       marker_layers(marker_x, encoding["y"]),
       {{"layer",
         json::array(
             {{{"transform", json::array({kInView, {{"filter", "isValid(datum.probe)"}}})},
               {"mark", {{"type", "text"}, {"dy", -10}, {"fontSize", 10}, {"color", "black"}}},
               {"encoding", {{"x", encoding["x"]}, {"y", encoding["y"]}, {"text", {{"field", "probe"}}}}}},
              clip_note_layer()})}}});
  return spec;
}

// Core × memory cells coloured by energy; the default cell outlined in black and
// the optimum's in magenta (where they are one cell, its outline says both).
json heatmap(const std::string& title, const std::string& data_name, const GroupShape& shape,
             const Units& units) {
  json spec = base_spec(title, data_name);
  spec["mark"] = "rect";
  // A clock that was not set has no number: its row or column says so instead of "null".
  const auto clock_label = [](const char* field, const char* as) {
    return json{{"calculate", fmt::format("isValid(datum.{0}) ? '' + datum.{0} : 'not set'", field)},
                {"as", as}};
  };
  spec["transform"] = json::array(
      {clock_label("sm_mhz", "core_clock"),
       clock_label("mem_mhz", "memory_clock"),
       {{"calculate",
         "datum.baseline && datum.optimum ? 'default = optimum' : datum.baseline ? 'default' : datum.optimum "
         "? 'optimum' : null"},
        {"as", "marker"}}});
  json x = axis("core_clock", "core clock (MHz)", true);
  x["sort"] = {{"field", "sm_mhz"}, {"op", "min"}};
  spec["encoding"] = {
      {"x", std::move(x)},
      {"y",
       {{"field", "memory_clock"},
        {"type", "ordinal"},
        {"title", "memory clock (MHz)"},
        {"sort", {{"field", "mem_mhz"}, {"op", "min"}, {"order", "descending"}}},
        {"axis", thinned_axis()}}},
      {"color",
       {{"field", "energy_per_item_j"},
        {"type", "quantitative"},
        {"title", "J per " + units.item},
        {"scale", {{"scheme", "viridis"}}}}},
      // Only the marked cells have an outline; the others no stroke at all.
      {"stroke",
       {{"condition",
         {{"test", "isValid(datum.marker)"},
          {"field", "marker"},
          {"type", "nominal"},
          {"title", nullptr},
          {"scale",
           {{"domain", json::array({"default", "optimum", "default = optimum"})},
            {"range", json::array({"black", "#e4007c", "#ff7f0e"})}}}}},
        {"value", nullptr}}},
      {"strokeWidth", {{"condition", {{"test", "isValid(datum.marker)"}, {"value", 2.5}}}, {"value", 0}}},
      {"tooltip", tooltip()}};
  if (shape.batches.size() > 1) {
    spec["encoding"]["facet"] = {{"field", "batch"},
                                 {"type", "nominal"},
                                 {"columns", 3},
                                 {"title", "batch"},
                                 {"sort", {{"field", "batch_rank"}, {"op", "min"}}}};
    spec["width"] = 200;
    spec["height"] = 160;
  }
  return spec;
}

json pareto_chart(const std::string& title, const std::string& data_name, const Units& units,
                  const SeriesStyle& series) {
  json spec = base_spec(title, data_name);
  const json x = axis("time_s", "time per iteration (s)");
  const json y = axis("energy_per_item_j", "energy per " + units.item + " (J)");
  spec["layer"] =
      json::array({{{"transform", json::array({kInView})},
                    {"mark", {{"type", "point"}, {"opacity", 0.6}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"color", series_colour("series", series.count, series.knob)},
                      {"tooltip", tooltip()}}}},
                   {{"transform", json::array({kInView, {{"filter", "datum.pareto"}}})},
                    {"mark", {{"type", "line"}, {"point", true}, {"color", "black"}, {"strokeWidth", 1.5}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"detail", {{"field", "batch"}, {"type", "nominal"}}},
                      {"order", {{"field", "time_s"}, {"type", "quantitative"}}},
                      {"tooltip", tooltip()}}}},
                   marker_layers(x, y),
                   clip_note_layer()});
  return spec;
}

// The series of a chart whose x axis is `x`, and the knob that tells them apart:
// the varied knob off the axis with the most values.
SeriesStyle series_style(const std::vector<const CaseAnalysis*>& cases, const GroupShape& shape, Knob x) {
  SeriesStyle style;
  std::set<std::string> labels;
  for (const CaseAnalysis* c : cases) {
    for (const PointSummary& p : c->points)
      labels.insert(series_label(shape, c->key.workload_case.batch, p.setting, x));
  }
  style.count = labels.size();
  std::size_t most = 1;
  for (const auto& [knob, values] : {std::pair{Knob::sm, &shape.sm}, std::pair{Knob::mem, &shape.mem},
                                     std::pair{Knob::power_limit, &shape.power_limit}}) {
    if (knob != x && values->size() > most) {
      most = values->size();
      style.knob = knob;
    }
  }
  return style;
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
    const std::string& prediction_label,
    const std::map<std::pair<CaseKey, Setting>, double>& measured_sm_mhz) {
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
    group.data = data_columns(cases, shape, probe_order, predicted, measured_sm_mhz);
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
