#include "report/normalised_charts.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/axis_range.hpp"
#include "report/chart_encoding.hpp"
#include "report/intervals.hpp"
#include "report/markers.hpp"

namespace dvfslab::report_detail {
namespace {

using nlohmann::json;

constexpr const char* kRelativeTitle = "relative to the default (default = 1)";

json ratio_tooltip() {
  return json::array({{{"field", "case"}},
                      {{"field", "x"}, {"title", "setting"}},
                      {{"field", "energy_ratio"}, {"title", "energy per item / default"}, {"format", ".3f"}},
                      {{"field", "time_ratio"}, {"title", "time per item / default"}, {"format", ".3f"}},
                      {{"field", "power_ratio"}, {"title", "mean power / default"}, {"format", ".3f"}}});
}

json ratio_axis(const std::string& title, const char* field) {
  return {{"field", field},
          {"type", "quantitative"},
          {"title", title},
          {"scale", {{"zero", false}}},
          {"axis", thinned_axis()}};
}

// The default's level (every ratio is 1 there), or the summary's zero.
json unit_rule(const char* channel, int at = 1) {
  return {{"name", fmt::format("unit_level_{}", channel)},
          {"mark", {{"type", "rule"}, {"color", "gray"}, {"strokeDash", json::array({2, 2})}}},
          {"encoding", {{channel, {{"datum", at}, {"type", "quantitative"}}}}}};
}

json in_view() { return json::array({in_view_filter()}); }

}  // namespace

json normalised_case_chart(const std::string& title, const std::string& data_name, Knob x) {
  json spec = base_spec(title, data_name);
  const json x_axis = ratio_axis(info(x).title, "x");
  json marker_x = x_axis;
  marker_x["field"] = "marker_x";
  const json metrics = {{"domain", json::array({kEnergyRatio.name, kTimeRatio.name, kPowerRatio.name})}};
  json layers = json::array({unit_rule("y")});
  json intervals = json::array();
  for (const Ratio& ratio : {kEnergyRatio, kTimeRatio, kPowerRatio}) {
    const json y = ratio_axis(kRelativeTitle, ratio.field);
    const json colour = {{"datum", ratio.name}, {"type", "nominal"}, {"title", nullptr}, {"scale", metrics}};
    layers.push_back(
        {{"transform", in_view()},
         {"mark", {{"type", "line"}, {"point", true}}},
         {"encoding", {{"x", x_axis}, {"y", y}, {"color", colour}, {"tooltip", ratio_tooltip()}}}});
    intervals.push_back(
        interval_bars(fmt::format("{}_interval", ratio.field).c_str(), "y", y, x_axis, colour));
  }
  layers.push_back(marker_layers(marker_x, ratio_axis(kRelativeTitle, kEnergyRatio.field)));
  layers.push_back({{"layer", std::move(intervals)}});
  layers.push_back(clip_note_layer("case_clip_note"));
  spec["params"] = json::array({show_intervals_param()});
  spec["layer"] = std::move(layers);
  return spec;
}

json normalised_network_chart(const std::string& title, const std::string& data_name, Knob x,
                              const Ratio& ratio, std::size_t series_count) {
  json spec = base_spec(title, data_name);
  const json x_axis = ratio_axis(info(x).title, "x");
  json marker_x = x_axis;
  marker_x["field"] = "marker_x";
  const json y = ratio_axis(std::string(ratio.name) + " / default", ratio.field);
  const json colour = series_colour("series", series_count, std::nullopt);
  spec["params"] = json::array({show_intervals_param()});
  spec["layer"] = json::array({unit_rule("y"),
                               {{"transform", in_view()},
                                {"mark", {{"type", "line"}, {"point", true}}},
                                {"encoding",
                                 {{"x", x_axis},
                                  {"y", y},
                                  {"color", colour},
                                  {"detail", {{"field", "series"}, {"type", "nominal"}}},
                                  {"tooltip", ratio_tooltip()}}}},
                               marker_layers(marker_x, y),
                               {{"layer", json::array({interval_bars("interval", "y", y, x_axis, colour)})}},
                               clip_note_layer("network_clip_note")});
  return spec;
}

json normalised_pareto_chart(const std::string& title, const std::string& data_name, const char* colour_field,
                             std::size_t colour_count) {
  json spec = base_spec(title, data_name);
  const json x = ratio_axis("time per item / default", kTimeRatio.field);
  const json y = ratio_axis("energy per item / default", kEnergyRatio.field);
  const json colour = colour_count > 0 ? series_colour(colour_field, colour_count, std::nullopt)
                                       : json{{"value", "steelblue"}};
  const json by_case = {{"field", "case"}, {"type", "nominal"}};
  spec["params"] = json::array({show_intervals_param()});
  spec["layer"] =
      json::array({unit_rule("x"),
                   unit_rule("y"),
                   {{"transform", in_view()},
                    {"mark", {{"type", "point"}, {"opacity", 0.5}}},
                    {"encoding", {{"x", x}, {"y", y}, {"color", colour}, {"tooltip", ratio_tooltip()}}}},
                   {{"transform", json::array({in_view_filter(), {{"filter", "datum.pareto"}}})},
                    {"mark", {{"type", "line"}, {"point", true}, {"strokeWidth", 1.5}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"color", colour},
                      {"detail", by_case},
                      {"order", {{"field", kTimeRatio.field}, {"type", "quantitative"}}},
                      {"tooltip", ratio_tooltip()}}}},
                   marker_layers(x, y),
                   clip_note_layer("gpu_clip_note"),
                   {{"layer", json::array({interval_bars("energy_interval", "y", y, x, colour),
                                           interval_bars("time_interval", "x", x, y, colour)})}}});
  return spec;
}

json savings_chart(const std::string& title, const std::string& data_name, std::size_t rows) {
  json spec = base_spec(title, data_name);
  spec["height"] = static_cast<int>(std::max<std::size_t>(rows, 3) * 18);
  spec["transform"] =
      json::array({{{"fold", json::array({"energy_saving_pct", "slowdown_pct"})},
                    {"as", json::array({"quantity", "percent"})}},
                   {{"calculate", "datum.quantity === 'energy_saving_pct' ? 'energy saving' : 'slowdown'"},
                    {"as", "quantity"}}});
  const json quantities = {{"domain", json::array({"energy saving", "slowdown"})}};
  spec["layer"] = json::array(
      {unit_rule("x", 0),
       {{"name", "savings_point"},
        {"mark", {{"type", "point"}, {"filled", true}, {"size", 70}}},
        {"encoding",
         {{"x",
           {{"field", "percent"}, {"type", "quantitative"}, {"title", "optimum against the default (%)"}}},
          // The rows name GPU, network and mode in full: Vega's default cuts them at 180 px.
          {"y",
           {{"field", "row"},
            {"type", "nominal"},
            {"title", nullptr},
            {"sort", nullptr},
            {"axis", {{"labelLimit", 420}}}}},
          {"color", {{"field", "quantity"}, {"type", "nominal"}, {"title", nullptr}, {"scale", quantities}}},
          {"shape",
           {{"field", "quantity"},
            {"type", "nominal"},
            {"title", nullptr},
            {"scale",
             {{"domain", quantities["domain"]}, {"range", json::array({"circle", "triangle-right"})}}}}},
          {"tooltip", json::array({{{"field", "row"}, {"title", "GPU · network · mode"}},
                                   {{"field", "quantity"}},
                                   {{"field", "percent"}, {"title", "%"}, {"format", ".1f"}},
                                   {{"field", "cases"}, {"title", "batch sizes with an optimum"}}})}}}}});
  return spec;
}

}  // namespace dvfslab::report_detail
