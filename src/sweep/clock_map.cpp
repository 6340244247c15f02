// A GPU's clock map learned from measured lines, and a setting's factor in it (see
// dvfslab/clock_map.hpp); its file format is clock_map_json.cpp.
#include "dvfslab/clock_map.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "dvfslab/error.hpp"
#include "dvfslab/sweep_table.hpp"
#include "sweep/local_quadratic.hpp"

namespace dvfslab {
namespace {

using Knob = std::optional<int> Setting::*;
constexpr Knob knobs[] = {&Setting::sm_mhz, &Setting::mem_mhz, &Setting::power_limit_w};

// The knob a line varies: one that every setting of it names, each a different value.
std::optional<Knob> varied_knob(const MeasuredLine& line) {
  for (const Knob knob : knobs) {
    std::set<int> values;
    for (const auto& [setting, energy] : line) {
      if (setting.*knob) values.insert(*(setting.*knob));
    }
    if (values.size() == line.size()) return knob;
  }
  return std::nullopt;
}

}  // namespace

ClockMap learn_clock_map(std::string gpu, const std::vector<MeasuredLine>& lines) {
  std::map<Setting, std::vector<double>> ratios;  // each line's energy over its trend, per setting
  ClockMap map;
  map.gpu = std::move(gpu);
  for (MeasuredLine line : lines) {
    if (line.size() < clock_map_least_line) continue;
    const auto knob = varied_knob(line);
    if (!knob) continue;
    std::sort(line.begin(), line.end(),
              [knob](const auto& a, const auto& b) { return a.first.*(*knob) < b.first.*(*knob); });
    std::vector<double> at, energies, steps;
    for (const auto& [setting, energy] : line) {
      if (!(energy > 0) || !std::isfinite(energy))
        throw ConfigError(fmt::format("clock map: the energy at {} must be a positive number, not {}",
                                      to_string(setting), energy));
      at.push_back(static_cast<double>(*(setting.*(*knob))));
      energies.push_back(energy);
      if (at.size() >= 2) steps.push_back(at.back() - at[at.size() - 2]);
    }
    // The trend over the span in the line's usual steps, by the knob's values: a
    // setting missing from the line (not applied, not measured) leaves a gap, not a
    // shift.
    std::nth_element(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(steps.size() / 2),
                     steps.end());
    const double reach = static_cast<double>(clock_map_trend_span + 1) * steps[steps.size() / 2];
    for (std::size_t i = 0; i < line.size(); ++i) {
      const auto trend = search_detail::local_quadratic_at(at, energies, at[i], reach);
      if (!trend || !(*trend > 0)) continue;
      ratios[line[i].first].push_back(energies[i] / *trend);
    }
    ++map.lines;
  }
  if (map.lines < 2)
    throw ConfigError(
        fmt::format("a clock map needs at least two workloads' lines of {} or more settings of {}; found {}",
                    clock_map_least_line, map.gpu.empty() ? "one GPU" : map.gpu, map.lines));
  double squared_errors = 0;
  for (const auto& [setting, measured] : ratios) {
    if (measured.size() < 2) continue;
    const auto n = static_cast<double>(measured.size());
    const double mean = std::accumulate(measured.begin(), measured.end(), 0.0) / n;
    double squares = 0;
    for (const double r : measured) squares += (r - mean) * (r - mean);
    map.factor[setting] = mean;
    squared_errors += squares / (n - 1) / n;  // the mean's squared standard error
  }
  if (!map.factor.empty())
    map.factor_noise = std::sqrt(squared_errors / static_cast<double>(map.factor.size()));
  return map;
}

ClockMap learn_clock_map(const std::vector<ResultRow>& rows, const std::optional<std::string>& gpu) {
  std::set<std::string> gpus;
  for (const ResultRow& row : rows) gpus.insert(row.gpu);
  if (gpus.empty()) throw ConfigError("no measurements to learn a clock map from");
  if (gpu && !gpus.count(*gpu))
    throw ConfigError(
        fmt::format("no GPU '{}' among the measurements; they hold: {}", *gpu, fmt::join(gpus, ", ")));
  if (!gpu && gpus.size() > 1)
    throw ConfigError(
        fmt::format("the measurements hold several GPUs ({}); name one with --gpu", fmt::join(gpus, ", ")));
  const std::string chosen = gpu ? *gpu : *gpus.begin();
  // Per workload, the mean energy per item of each setting.
  std::map<std::string, std::map<Setting, std::pair<double, int>>> workloads;
  for (const ResultRow& row : rows) {
    if (row.gpu != chosen || row.flags.setting_not_applied() || row.items_per_iteration <= 0) continue;
    auto& [sum, count] = workloads[sweep_table_workload_key(row)][row.setting];
    sum += row.energy_per_iteration_j / row.items_per_iteration;
    ++count;
  }
  // Each workload's lines along every knob: its settings grouped by the other knobs.
  std::vector<MeasuredLine> lines;
  for (const auto& [workload, settings] : workloads) {
    for (const Knob knob : knobs) {
      std::map<Setting, MeasuredLine> by_rest;
      for (const auto& [setting, sum] : settings) {
        if (!(setting.*knob)) continue;
        Setting rest = setting;
        rest.*knob = std::nullopt;
        by_rest[rest].emplace_back(setting, sum.first / sum.second);
      }
      for (auto& [rest, line] : by_rest) lines.push_back(std::move(line));
    }
  }
  return learn_clock_map(chosen, lines);
}

std::optional<double> clock_map_factor(const ClockMap& map, const Setting& setting) {
  if (const auto found = map.factor.find(setting); found != map.factor.end()) return found->second;
  std::optional<double> agreeing;
  for (const auto& [mapped, factor] : map.factor) {
    const bool agrees = std::all_of(std::begin(knobs), std::end(knobs), [&](Knob knob) {
      return !(setting.*knob) || setting.*knob == mapped.*knob;
    });
    if (!agrees || setting.workload_profile != mapped.workload_profile) continue;
    if (agreeing) return std::nullopt;
    agreeing = factor;
  }
  return agreeing;
}

}  // namespace dvfslab
