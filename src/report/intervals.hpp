#pragma once
// The 95 % confidence intervals of the plotted means, drawn as error bars that the
// page's control (the signal `show_intervals`, on by default) shows or hides.
#include <nlohmann/json.hpp>

namespace dvfslab::report_detail {

// The chart's parameter the page's control sets; every chart with error bars declares it.
nlohmann::json show_intervals_param();

// A layer named `name` of one bar per point across the interval of the field that
// `value` encodes on `value_channel` ("y" or "x"), from <field>_low to <field>_high
// (the page's script derives them from the data's <field>_ci half-widths), placed by
// `position` on the other channel and coloured like the point's series by `colour`.
// Points without an interval (one repetition) and points off the axes get none.
nlohmann::json interval_bars(const char* name, const char* value_channel, const nlohmann::json& value,
                             const nlohmann::json& position, const nlohmann::json& colour);

}  // namespace dvfslab::report_detail
