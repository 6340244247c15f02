// Knob specs → concrete settings for one GPU: resolves "all", ranges, every n-th and
// evenly spread clocks against its clock table, and refuses what it does not support.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "dvfslab/error.hpp"
#include "dvfslab/plan.hpp"
#include "sweep/plan_limits.hpp"

namespace dvfslab {
namespace {

// `supported` ascending, non-empty.
int nearest(const std::vector<int>& supported, int target) {
  auto above = std::lower_bound(supported.begin(), supported.end(), target);
  if (above == supported.end()) return supported.back();
  if (above == supported.begin()) return *above;
  auto below = std::prev(above);
  return (target - *below <= *above - target) ? *below : *above;
}

std::string nearest_text(const std::vector<int>& supported, int target) {
  auto above = std::lower_bound(supported.begin(), supported.end(), target);
  if (above == supported.end()) return fmt::format("the highest is {}", supported.back());
  if (above == supported.begin()) return fmt::format("the lowest is {}", supported.front());
  return fmt::format("nearest supported are {} and {}", *std::prev(above), *above);
}

std::vector<int> within(const std::vector<int>& supported, const KnobSpec& spec) {
  std::vector<int> out;
  for (int value : supported) {
    if ((!spec.min || value >= *spec.min) && (!spec.max || value <= *spec.max)) out.push_back(value);
  }
  return out;
}

std::vector<int> unique_sorted(std::vector<int> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

// `n` values spread evenly over [lo, hi]; each target snapped to the nearest of
// `candidates` (ascending).
std::vector<int> spread(const std::vector<int>& candidates, int n) {
  const double lo = candidates.front(), hi = candidates.back();
  std::vector<int> out;
  for (int k = 0; k < n; ++k) {
    const double target = n == 1 ? hi : lo + (hi - lo) * k / (n - 1);
    out.push_back(nearest(candidates, static_cast<int>(std::lround(target))));
  }
  return unique_sorted(out);
}

// Resolves a clock knob against the supported values (ascending). `what` names the
// knob and the context for errors ("SM clock ... at memory 877 MHz").
std::vector<std::optional<int>> resolve_clock(const KnobSpec& spec, const std::vector<int>& supported,
                                              const std::string& what, const std::string& gpu_where) {
  using Kind = KnobSpec::Kind;
  if (spec.kind == Kind::unset) return {std::nullopt};
  if (supported.empty()) {
    throw NotSupportedError(
        fmt::format("{}: {} lists no supported {} values, so it cannot be swept; remove the knob", spec.where,
                    gpu_where, what));
  }
  std::vector<int> values;
  switch (spec.kind) {
    case Kind::unset: break;
    case Kind::list:
      for (int value : spec.values) {
        if (!std::binary_search(supported.begin(), supported.end(), value)) {
          throw ConfigError(spec.where, fmt::format("{} {} MHz is not supported by {}: {} MHz", what, value,
                                                    gpu_where, nearest_text(supported, value)));
        }
        values.push_back(value);
      }
      break;
    case Kind::range:
      // A range wholly outside the table would snap every value to one end.
      if (spec.stop < supported.front() || spec.start > supported.back()) {
        throw ConfigError(
            spec.where,
            fmt::format("{} range {}–{} MHz lies outside the clocks {} supports ({}–{} MHz)", what,
                        spec.start, spec.stop, gpu_where, supported.front(), supported.back()));
      }
      for (long value = spec.start; value <= spec.stop; value += spec.step) {
        values.push_back(nearest(supported, static_cast<int>(value)));
      }
      break;
    case Kind::all:
    case Kind::every:
    case Kind::count: {
      const auto candidates = within(supported, spec);
      if (candidates.empty()) {
        throw ConfigError(
            spec.where,
            fmt::format("no supported {} of {} lies within the bounds given (it supports {}–{} MHz)", what,
                        gpu_where, supported.front(), supported.back()));
      }
      if (spec.kind == Kind::all) {
        values = candidates;
      } else if (spec.kind == Kind::every) {
        // Counted from the highest clock, so the fastest setting is always included.
        for (long i = static_cast<long>(candidates.size()) - 1; i >= 0; i -= spec.n)
          values.push_back(candidates[i]);
      } else {
        values = spread(candidates, spec.n);
      }
      break;
    }
  }
  std::vector<std::optional<int>> out;
  for (int value : unique_sorted(values)) out.emplace_back(value);
  return out;
}

std::vector<std::optional<int>> resolve_power(const KnobSpec& spec, const PowerLimits& limits,
                                              const std::string& gpu_name) {
  using Kind = KnobSpec::Kind;
  if (spec.kind == Kind::unset) return {std::nullopt};
  const auto range_text = [&] {
    return fmt::format("{}–{} W", limits.min_w ? fmt::format("{:.0f}", *limits.min_w) : "?",
                       limits.max_w ? fmt::format("{:.0f}", *limits.max_w) : "?");
  };
  std::vector<int> values;
  if (spec.kind == Kind::list) {
    values = spec.values;
  } else if (spec.kind == Kind::range) {
    // Checked before expanding: the ends decide whether any value is out of range.
    if ((limits.min_w && spec.start < std::ceil(*limits.min_w)) ||
        (limits.max_w && spec.stop > std::floor(*limits.max_w))) {
      throw ConfigError(spec.where,
                        fmt::format("power limit range {}–{} W goes outside {}'s range {}: choose a range "
                                    "inside it",
                                    spec.start, spec.stop, gpu_name, range_text()));
    }
    for (long value = spec.start; value <= spec.stop; value += spec.step)
      values.push_back(static_cast<int>(value));
  } else {
    const auto lo = spec.min ? std::optional<double>(*spec.min) : limits.min_w;
    const auto hi = spec.max ? std::optional<double>(*spec.max) : limits.max_w;
    if (!lo || !hi) {
      throw NotSupportedError(
          fmt::format("{}: {} does not report its power-limit range; give power_limit_w as a list",
                      spec.where, gpu_name));
    }
    for (int k = 0; k < spec.n; ++k) {
      const double value = spec.n == 1 ? *hi : *lo + (*hi - *lo) * k / (spec.n - 1);
      values.push_back(static_cast<int>(std::lround(value)));
    }
  }
  for (int value : values) {
    // The driver takes whole milliwatts; a limit rounded inside the range is accepted.
    if ((limits.min_w && value < std::ceil(*limits.min_w)) ||
        (limits.max_w && value > std::floor(*limits.max_w))) {
      throw ConfigError(spec.where,
                        fmt::format("power limit {} W is outside {}'s range {}: choose a value inside it",
                                    value, gpu_name, range_text()));
    }
  }
  std::vector<std::optional<int>> out;
  for (int value : unique_sorted(values)) out.emplace_back(value);
  return out;
}

std::vector<int> ascending(std::vector<int> values) { return unique_sorted(std::move(values)); }

}  // namespace

std::vector<Setting> expand_settings(const Knobs& knobs, const ClockTable& clocks, const PowerLimits& limits,
                                     const std::string& gpu_name) {
  const auto memory_options =
      resolve_clock(knobs.mem_mhz, ascending(clocks.memory_mhz), "memory clock", gpu_name);
  const auto power_options = resolve_power(knobs.power_limit_w, limits, gpu_name);
  // The SM clocks per memory clock, resolved first so the grid is counted before it
  // is built.
  std::vector<std::vector<std::optional<int>>> sm_options;
  std::size_t combinations = 0;
  for (const auto& memory : memory_options) {
    // With the memory clock left alone, SM clocks must be valid at the default one.
    std::optional<int> table_memory = memory ? memory : clocks.default_memory_mhz;
    std::vector<int> graphics;
    std::string gpu_where = gpu_name;
    if (table_memory && clocks.graphics_mhz.count(*table_memory)) {
      graphics = ascending(clocks.graphics_mhz.at(*table_memory));
      gpu_where += fmt::format(" at memory {} MHz", *table_memory);
    } else {
      graphics = ascending(clocks.all_graphics_mhz());
    }
    sm_options.push_back(resolve_clock(knobs.sm_mhz, graphics, "SM clock", gpu_where));
    combinations += sm_options.back().size() * power_options.size();
  }
  if (combinations > plan_limits::max_grid_points) {
    throw ConfigError(
        fmt::format("the knobs select {} settings on {}, more than the {} a plan may hold: choose fewer "
                    "values (a list, a coarser step or {{ count = N }})",
                    combinations, gpu_name, plan_limits::max_grid_points));
  }
  std::set<Setting> settings;
  for (std::size_t m = 0; m < memory_options.size(); ++m) {
    for (const auto& sm : sm_options[m]) {
      for (const auto& power : power_options) {
        Setting setting{sm, memory_options[m], power};
        if (!setting.is_default()) settings.insert(setting);
      }
    }
  }
  return {settings.begin(), settings.end()};
}

}  // namespace dvfslab
