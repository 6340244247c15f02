#pragma once
// The charts that put cases on one scale (their data: report/normalised_data.hpp):
// each case relative to its own default, the cases of one network overlaid, the
// Pareto fronts of one GPU, and the summary of every network's optimum.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "report/figure_shape.hpp"

namespace dvfslab::report_detail {

// The ratio columns and how their charts name them.
struct Ratio {
  const char* field;  // "energy_ratio"
  const char* name;   // "energy per item"
};
constexpr Ratio kEnergyRatio{"energy_ratio", "energy per item"};
constexpr Ratio kTimeRatio{"time_ratio", "time per item"};
constexpr Ratio kPowerRatio{"power_ratio", "mean power"};

// Energy, time and power of one case relative to its default against the knob `x`,
// a dashed line at 1.0, the default and optimum markers on the energy line.
nlohmann::json normalised_case_chart(const std::string& title, const std::string& data_name, Knob x);

// One ratio of every case of a network, one line per case (mode · batch size).
nlohmann::json normalised_network_chart(const std::string& title, const std::string& data_name, Knob x,
                                        const Ratio& ratio, std::size_t series_count);

// Time per item against energy per item of every case of a GPU, both relative to the
// case's default, each case's Pareto front as a line; coloured by case where there
// are at most ten, else by network where there are at most ten, else not at all.
nlohmann::json normalised_pareto_chart(const std::string& title, const std::string& data_name,
                                       const char* colour_field, std::size_t colour_count);

// Per GPU × mode × network, the optimum's energy saving (circle) and slowdown
// (triangle) against the default, in %.
nlohmann::json savings_chart(const std::string& title, const std::string& data_name, std::size_t rows);

}  // namespace dvfslab::report_detail
