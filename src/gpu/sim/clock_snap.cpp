#include "gpu/sim/clock_snap.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "dvfslab/error.hpp"

namespace dvfslab::sim {

std::string nearest_supported_text(const std::vector<int>& descending, int mhz) {
  if (descending.empty()) return "none";
  // First clock not above mhz, in a descending list.
  const auto below = std::find_if(descending.begin(), descending.end(), [mhz](int c) { return c <= mhz; });
  if (below == descending.begin()) return fmt::format("{} MHz (the highest)", descending.front());
  if (below == descending.end()) return fmt::format("{} MHz (the lowest)", descending.back());
  if (*below == mhz) return fmt::format("{} MHz", mhz);
  return fmt::format("{} or {} MHz", *below, *std::prev(below));
}

int require_supported_clock(const std::vector<int>& descending, int mhz, std::string_view what,
                            std::string_view gpu_name) {
  if (std::find(descending.begin(), descending.end(), mhz) != descending.end()) return mhz;
  throw ConfigError(
      fmt::format("{} {} MHz is not supported by {}: the nearest supported are {} "
                  "(see `dvfslab info` for the full table)",
                  what, mhz, gpu_name, nearest_supported_text(descending, mhz)));
}

std::pair<int, int> snap_clock_range(const std::vector<int>& descending, int min_mhz, int max_mhz,
                                     std::string_view what, std::string_view gpu_name) {
  if (min_mhz > max_mhz) {
    throw ConfigError(
        fmt::format("{} range {}–{} MHz is inverted: give the lower clock first", what, min_mhz, max_mhz));
  }
  std::optional<int> lowest;
  std::optional<int> highest;
  for (int clock : descending) {
    if (clock < min_mhz || clock > max_mhz) continue;
    if (!highest) highest = clock;
    lowest = clock;
  }
  if (!lowest) {
    throw ConfigError(
        fmt::format("{} range {}–{} MHz holds no clock supported by {}: the nearest supported "
                    "are {} (see `dvfslab info` for the full table)",
                    what, min_mhz, max_mhz, gpu_name, nearest_supported_text(descending, max_mhz)));
  }
  return {*lowest, *highest};
}

}  // namespace dvfslab::sim
