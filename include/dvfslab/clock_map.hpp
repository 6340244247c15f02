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

// The map as JSON (format "dvfslab-clock-map", version 1) and back. Parsing throws
// ConfigError naming `name` for text that is not such a map.
std::string clock_map_json(const ClockMap& map);
ClockMap parse_clock_map(std::string_view text, const std::string& name);
// Reads a map file: ConfigError for a missing file, one that is not a regular file,
// or one parse_clock_map refuses.
ClockMap read_clock_map(const std::filesystem::path& path);

}  // namespace dvfslab
