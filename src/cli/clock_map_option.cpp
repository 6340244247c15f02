#include "cli/clock_map_option.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "dvfslab/error.hpp"

namespace dvfslab::cli {

std::shared_ptr<const ClockMap> read_clock_map_option(const std::optional<std::string>& file,
                                                      const std::string& strategy, const Objective& objective,
                                                      const std::vector<std::string>& guided) {
  if (!file) return nullptr;
  if (std::find(guided.begin(), guided.end(), strategy) == guided.end())
    throw UsageError(
        fmt::format("--clock-map guides --strategy {}, not {}", fmt::join(guided, " or "), strategy));
  if (!clock_map_guides(objective))
    throw UsageError(
        fmt::format("--clock-map maps energy: it guides --objective energy or energy-within-slowdown, not {}",
                    to_string(objective)));
  return std::make_shared<const ClockMap>(read_clock_map(*file));
}

void check_clock_map_gpus(const ClockMap& map, const std::string& file,
                          std::span<const std::unique_ptr<Gpu>> gpus) {
  for (const auto& gpu : gpus) {
    if (map.gpu != gpu->identity().name) {
      throw ConfigError(
          fmt::format("--clock-map {} is a map of {}, not of {}: learn one from sweeps of that GPU model "
                      "(dvfslab clock-map)",
                      file, map.gpu, gpu->identity().name));
    }
  }
  fmt::print(stderr,
             "dvfslab: searching long lines with the clock map of {} ({} settings, {} workloads' lines)\n",
             map.gpu, map.factor.size(), map.lines);
}

}  // namespace dvfslab::cli
