#pragma once
// A GPU's clock map (docs/search.md, "A GPU's clock map"): how much more or less
// energy each setting costs than the smooth trend of its line, as the same GPU model
// showed on other workloads. On a real dense line part of the scatter between
// neighbouring clocks is the GPU's own voltage/frequency table, not noise: some
// clocks are cheaper than their neighbours for every workload. Learned from earlier
// sweeps of the GPU model, the map tells `auto` which settings of a long line to
// measure after a few spread ones (StrategyOptions::clock_map).
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/results.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab {

struct ClockMap {
  std::string gpu;  // the GPU model it was learned on, as its rows name it
  // Per setting: the mean, over the lines that measured it, of its energy over its
  // line's smooth trend (1.02: 2 % dearer than its neighbours suggest).
  std::map<Setting, double> factor;
  std::size_t lines = 0;  // the workloads' lines it was learned from
  // The standard error a factor has from the lines' own scatter (root mean square over
  // the settings): a map learned from few noisy lines varies by about this much with
  // no GPU table behind it.
  double factor_noise = 0;
};

// A line shorter than this tells no trend apart from its scatter: issue 27's long
// lines, a modern GPU's clocks.
inline constexpr std::size_t clock_map_least_line = 30;
// The trend a line is divided by: a local quadratic over this many settings on each
// side (the span the benchmarks' expected line uses).
inline constexpr std::size_t clock_map_trend_span = 7;

// One workload's line along one knob as measured: (setting, energy per item), one
// entry per setting, any order; the other knobs equal.
using MeasuredLine = std::vector<std::pair<Setting, double>>;

// Learns a map from lines of one GPU model. Lines shorter than clock_map_least_line
// are skipped; a setting is kept when at least two lines measured it (one line's
// scatter is its own). Throws ConfigError when fewer than two lines are long enough.
ClockMap learn_clock_map(std::string gpu, const std::vector<MeasuredLine>& lines);

// The same from result rows (a sweep table or a database): every workload's line
// along each knob of the rows of `gpu` (when absent, the rows must hold one GPU),
// repetitions averaged, settings the GPU did not apply left out. Throws ConfigError
// naming the GPUs the rows hold when `gpu` is not among them or is needed.
ClockMap learn_clock_map(const std::vector<ResultRow>& rows, const std::optional<std::string>& gpu);

// The factor of `setting`: its own, or where the map holds no such setting, that of
// the one setting of the map that agrees with it on every knob it sets (a map learned
// with the memory clock named serves a search that leaves it as found). None when
// there is no such setting or several.
std::optional<double> clock_map_factor(const ClockMap& map, const Setting& setting);

// Searching a long line with a map, as `auto` does (src/sweep/map_guided_line.cpp) and
// the tuner's online search: measure settings spread over the line, divide their
// values by their factors to read the line's trend, and measure the settings whose
// trend times factor is least. The numbers are `auto`'s defaults (issue 27's 12
// probes: the default, 8 spread, 3 predicted; not fitted).
struct MapGuidedLineRules {
  std::size_t spread = 8;
  std::size_t predicted = 3;
  // A map whose factors vary less than this beyond their noise is taken as flat: it
  // could not change which setting is measured (the search evidence's resolution).
  double resolution = 0.005;
};

// Whether a map guides a search for `objective`: the map is of energy, so energy with
// or without a slowdown limit; an objective of time would need the time's scatter.
bool clock_map_guides(const Objective& objective);

// The map's factor of every setting of `line`; none when it lacks one of them.
std::optional<std::vector<double>> clock_map_line_factors(const ClockMap& map,
                                                          const std::vector<Setting>& line);
// Whether `factors` vary by at least `resolution` beyond `noise` (their relative
// standard deviation with the noise's variance taken out): what a map learned from
// few noisy lines varies by its noise alone is no GPU's table.
bool clock_map_varies_beyond(const std::vector<double>& factors, double noise, double resolution);
// The factors of `line` when the map guides a search along it: the line is at least
// clock_map_least_line long, the map holds every setting of it and its factors vary
// by at least rules.resolution beyond the map's noise; none otherwise.
std::optional<std::vector<double>> clock_map_guiding_factors(const ClockMap& map,
                                                             const std::vector<Setting>& line,
                                                             const MapGuidedLineRules& rules = {});
// The indices of `spread` settings evenly spread over a line of `line_size` (both
// ends included), from the top down: what a map-guided search measures first.
std::vector<std::size_t> clock_map_spread_indices(std::size_t line_size, std::size_t spread);
// From the spread settings' readings (index, value; the infeasible left out): the
// indices of the `predicted` settings not spread whose trend (a local quadratic over
// the spread settings' values divided by their factors) times factor is least,
// least first. A pure function of the readings, so a search replayed from them
// names the same settings.
std::vector<std::size_t> clock_map_predicted_indices(
    const std::vector<std::pair<std::size_t, double>>& spread_values, const std::vector<double>& factor,
    std::size_t spread, std::size_t predicted);

// The map as JSON (format "dvfslab-clock-map", version 1) and back. Parsing throws
// ConfigError naming `name` for text that is not such a map.
std::string clock_map_json(const ClockMap& map);
ClockMap parse_clock_map(std::string_view text, const std::string& name);
// Reads a map file: ConfigError for a missing file, one that is not a regular file,
// or one parse_clock_map refuses.
ClockMap read_clock_map(const std::filesystem::path& path);

}  // namespace dvfslab
