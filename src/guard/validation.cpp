// Checks settings before anything changes, so that a bad plan fails in one line
// and leaves the GPU untouched.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"

namespace dvfslab {
namespace {

// The supported clocks closest below and above `mhz` (one of them when `mhz` is
// outside the range), as "1230 MHz or 1245 MHz".
std::string nearest_clocks_text(const std::vector<int>& supported, int mhz) {
  std::optional<int> below;
  std::optional<int> above;
  for (int clock : supported) {
    if (clock < mhz && (!below || clock > *below)) below = clock;
    if (clock > mhz && (!above || clock < *above)) above = clock;
  }
  if (below && above) return fmt::format("{} MHz or {} MHz", *below, *above);
  return fmt::format("{} MHz", below ? *below : *above);
}

std::string range_text(const std::vector<int>& supported) {
  const auto [low, high] = std::minmax_element(supported.begin(), supported.end());
  return fmt::format("{}–{} MHz, {} clocks", *low, *high, supported.size());
}

// The graphics clocks an SM clock must come from: those of the memory clock the
// setting runs with (its own, else the default), else those of any memory clock.
std::vector<int> graphics_clocks_for(const ClockTable& table, std::optional<int> memory_mhz,
                                     std::string& context) {
  const std::optional<int> memory = memory_mhz ? memory_mhz : table.default_memory_mhz;
  if (memory) {
    const auto it = table.graphics_mhz.find(*memory);
    if (it != table.graphics_mhz.end()) {
      context = fmt::format(" at memory clock {} MHz", *memory);
      return it->second;
    }
  }
  context.clear();
  return table.all_graphics_mhz();
}

bool changes_control(const Setting& setting) { return !setting.is_default(); }

}  // namespace

void check_clock_changes_allowed(std::span<const Setting> settings, bool allow_clock_changes,
                                 bool read_only) {
  const auto changing = std::find_if(settings.begin(), settings.end(), changes_control);
  if (changing == settings.end()) return;
  if (read_only) {
    throw PermissionError(fmt::format(
        "the plan changes clocks or power limits ({}) but DVFSLAB_READ_ONLY=1 forbids every "
        "control call; unset DVFSLAB_READ_ONLY to allow changes, or measure the default setting only",
        to_string(*changing)));
  }
  if (!allow_clock_changes) {
    throw PermissionError(
        fmt::format("the plan changes clocks or power limits ({}); pass --allow-clock-changes to allow it "
                    "(dvfslab restores the GPU afterwards), or measure the default setting only",
                    to_string(*changing)));
  }
}

void validate_setting(const std::string& gpu_name, const ClockTable& table, const PowerLimits& limits,
                      const Setting& setting) {
  if (setting.mem_mhz && !table.memory_mhz.empty() &&
      std::find(table.memory_mhz.begin(), table.memory_mhz.end(), *setting.mem_mhz) ==
          table.memory_mhz.end()) {
    throw ConfigError(fmt::format(
        "memory clock {} MHz is not supported by {}; nearest supported: {} ({})", *setting.mem_mhz, gpu_name,
        nearest_clocks_text(table.memory_mhz, *setting.mem_mhz), range_text(table.memory_mhz)));
  }
  if (setting.sm_mhz) {
    std::string context;
    const std::vector<int> graphics = graphics_clocks_for(table, setting.mem_mhz, context);
    if (!graphics.empty() && std::find(graphics.begin(), graphics.end(), *setting.sm_mhz) == graphics.end()) {
      throw ConfigError(fmt::format("SM clock {} MHz is not supported by {}{}; nearest supported: {} ({})",
                                    *setting.sm_mhz, gpu_name, context,
                                    nearest_clocks_text(graphics, *setting.sm_mhz), range_text(graphics)));
    }
  }
  if (setting.power_limit_w) {
    const double watts = *setting.power_limit_w;
    const bool too_low = limits.min_w && watts < *limits.min_w;
    const bool too_high = limits.max_w && watts > *limits.max_w;
    if (too_low || too_high) {
      throw ConfigError(fmt::format("power limit {} W is outside the range of {}: {}–{} W",
                                    *setting.power_limit_w, gpu_name,
                                    limits.min_w ? fmt::format("{:g}", *limits.min_w) : "?",
                                    limits.max_w ? fmt::format("{:g}", *limits.max_w) : "?"));
    }
  }
}

void validate_plan(Gpu& gpu, std::span<const Setting> settings, bool allow_clock_changes) {
  check_clock_changes_allowed(settings, allow_clock_changes, gpu.read_only());
  if (std::none_of(settings.begin(), settings.end(), changes_control)) return;
  const ClockTable table = gpu.clock_table();
  const PowerLimits limits = gpu.power_limits();
  for (const Setting& setting : settings) validate_setting(gpu.identity().name, table, limits, setting);
}

}  // namespace dvfslab
