#include "report/charts.hpp"

#include <fmt/format.h>

#include "report/axis_range.hpp"
#include "report/chart_encoding.hpp"
#include "report/intervals.hpp"
#include "report/markers.hpp"

namespace dvfslab::report_detail {

using nlohmann::json;

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

json line_chart(const std::string& title, const std::string& data_name, Knob x, const char* y_field,
                const std::string& y_title, const char* series_field, const SeriesStyle& series) {
  const KnobInfo knob = info(x);
  json spec = base_spec(title, data_name);
  const json encoding = {{"x", axis(knob.field, knob.title, x == Knob::none)},
                         {"y", axis(y_field, y_title)},
                         {"color", series_colour(series_field, series.count, series.knob)},
                         {"detail", {{"field", series_field}, {"type", "nominal"}}},
                         {"tooltip", tooltip()}};
  // A default left uncontrolled has no clock of its own: its marker stands at the
  // clock measured there (marker_sm_mhz, marker_mem_mhz).
  json marker_x = encoding["x"];
  if (x == Knob::sm) marker_x["field"] = "marker_sm_mhz";
  if (x == Knob::mem) marker_x["field"] = "marker_mem_mhz";
  // The lines; the default and optimum markers; over them each point's interval and
  // the labels: a search's probes carry their order number above the point, and
  // points off the axes are named.
  spec["params"] = json::array({show_intervals_param()});
  spec["layer"] = json::array(
      {{{"transform", json::array({in_view_filter()})},
        {"mark", {{"type", "line"}, {"point", true}}},
        {"encoding", encoding}},
       marker_layers(marker_x, encoding["y"]),
       {{"layer",
         json::array(
             {interval_bars("interval", "y", encoding["y"], encoding["x"], encoding["color"]),
              {{"transform", json::array({in_view_filter(), {{"filter", "isValid(datum.probe)"}}})},
               {"mark", {{"type", "text"}, {"dy", -10}, {"fontSize", 10}, {"color", "black"}}},
               {"encoding", {{"x", encoding["x"]}, {"y", encoding["y"]}, {"text", {{"field", "probe"}}}}}},
              clip_note_layer()})}}});
  return spec;
}

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
  const json colour = series_colour("series", series.count, series.knob);
  spec["params"] = json::array({show_intervals_param()});
  spec["layer"] =
      json::array({{{"transform", json::array({in_view_filter()})},
                    {"mark", {{"type", "point"}, {"opacity", 0.6}}},
                    {"encoding", {{"x", x}, {"y", y}, {"color", colour}, {"tooltip", tooltip()}}}},
                   {{"transform", json::array({in_view_filter(), {{"filter", "datum.pareto"}}})},
                    {"mark", {{"type", "line"}, {"point", true}, {"color", "black"}, {"strokeWidth", 1.5}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"detail", {{"field", "batch"}, {"type", "nominal"}}},
                      {"order", {{"field", "time_s"}, {"type", "quantitative"}}},
                      {"tooltip", tooltip()}}}},
                   marker_layers(x, y),
                   clip_note_layer(),
                   {{"layer", json::array({interval_bars("energy_interval", "y", y, x, colour),
                                           interval_bars("time_interval", "x", x, y, colour)})}}});
  return spec;
}

}  // namespace dvfslab::report_detail
