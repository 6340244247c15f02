#pragma once
// --clock-map of `search`, `sweep` and `tune`: the GPU model's clock map `auto` (and
// the tuner's `online`) search long lines with (docs/search.md, "A GPU's clock map").
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/clock_map.hpp"
#include "dvfslab/gpu.hpp"

namespace dvfslab::cli {

// The map of `file` (none when the option was not given), refused where nothing would
// use it: UsageError for a strategy not among `guided` (the command's strategies that
// use a map) or an objective other than energy (with or without a slowdown limit);
// ConfigError for a file that is not a map.
std::shared_ptr<const ClockMap> read_clock_map_option(const std::optional<std::string>& file,
                                                      const std::string& strategy, const Objective& objective,
                                                      const std::vector<std::string>& guided = {"auto"});

// ConfigError unless every GPU is the model the map was learned on; then one line on
// stderr saying the map is in use.
void check_clock_map_gpus(const ClockMap& map, const std::string& file,
                          std::span<const std::unique_ptr<Gpu>> gpus);

}  // namespace dvfslab::cli
