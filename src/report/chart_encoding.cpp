#include "report/chart_encoding.hpp"

namespace dvfslab::report_detail {

using nlohmann::json;

json tooltip() {
  return json::array({{{"field", "setting"}, {"title", "setting (core/mem/limit)"}},
                      {{"field", "batch"}},
                      {{"field", "time_s"}, {"title", "time per iteration (s)"}, {"format", ".4g"}},
                      {{"field", "power_w"}, {"title", "mean power (W)"}, {"format", ".4g"}},
                      {{"field", "throughput"}, {"format", ".4g"}},
                      {{"field", "energy_per_item_j"}, {"title", "energy per item (J)"}, {"format", ".4g"}},
                      {{"field", "repetitions"}}});
}

json thinned_axis() { return {{"labelOverlap", "greedy"}, {"labelSeparation", 4}}; }

json axis(const char* field, const std::string& title, bool ordinal) {
  json encoding = {{"field", field},
                   {"type", ordinal ? "ordinal" : "quantitative"},
                   {"title", title},
                   {"axis", thinned_axis()}};
  if (!ordinal) encoding["scale"] = {{"zero", false}};
  return encoding;
}

json base_spec(const std::string& title, const std::string& data_name) {
  return {{"title", title}, {"width", 340}, {"height", 220}, {"data", {{"name", data_name}}}};
}

namespace {
constexpr std::size_t kPaletteColours = 10;
}  // namespace

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

}  // namespace dvfslab::report_detail
