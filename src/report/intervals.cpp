#include "report/intervals.hpp"

#include <fmt/format.h>

#include <string>

#include "report/axis_range.hpp"

namespace dvfslab::report_detail {

using nlohmann::json;

json show_intervals_param() { return {{"name", "show_intervals"}, {"value", true}}; }

json interval_bars(const char* name, const char* value_channel, const json& value, const json& position,
                   const json& colour) {
  const std::string field = value.at("field").get<std::string>();
  const std::string position_channel = std::string(value_channel) == "y" ? "x" : "y";
  json low = value;
  low["field"] = field + "_low";
  return {{"name", name},
          {"transform",
           json::array({in_view_filter(),
                        {{"filter", fmt::format("show_intervals && isValid(datum.{}_low)", field)}}})},
          {"mark", {{"type", "rule"}, {"strokeWidth", 1.2}}},
          {"encoding",
           {{position_channel, position},
            {value_channel, std::move(low)},
            {std::string(value_channel) + "2", {{"field", field + "_high"}}},
            {"color", colour}}}};
}

}  // namespace dvfslab::report_detail
