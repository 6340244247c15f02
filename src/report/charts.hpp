#pragma once
// The report's kinds of chart, as Vega-Lite specifications over a group's data set.
#include <string>

#include <nlohmann/json.hpp>

#include "report/figure_shape.hpp"

namespace dvfslab::report_detail {

struct Units {
  std::string item;  // "image"
  std::string rate;  // "images/s"
};

// `y_field` against the knob `x`, one line per series, with the default and optimum
// markers, a search's probe numbers and the note on points left off the axes.
nlohmann::json line_chart(const std::string& title, const std::string& data_name, Knob x, const char* y_field,
                          const std::string& y_title, const char* series_field, const SeriesStyle& series);

// The model's energy per item: a band for its interval and a dashed line, in grey and
// black so they never read as one of the measured series.
void add_prediction_layers(nlohmann::json& spec, const std::string& label, const char* series_field);

// Core × memory cells coloured by energy; the default cell outlined in black and
// the optimum's in magenta (where they are one cell, its outline says both).
nlohmann::json heatmap(const std::string& title, const std::string& data_name, const GroupShape& shape,
                       const Units& units);

// Every point by (time, energy), the Pareto frontier of each case as a black line.
nlohmann::json pareto_chart(const std::string& title, const std::string& data_name, const Units& units,
                            const SeriesStyle& series);

}  // namespace dvfslab::report_detail
