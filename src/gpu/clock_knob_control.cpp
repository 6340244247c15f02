#include "gpu/clock_knob_control.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <type_traits>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu_json.hpp"

namespace dvfslab {
namespace {

using nlohmann::json;

constexpr const char* sm_lock = "sm_lock";
constexpr const char* memory_lock = "memory_lock";
constexpr const char* application_clocks = "application_clocks";
constexpr const char* power_limit = "power_limit";

// The supported graphics clock at `memory` closest to `wanted` from below (the
// lowest one when all are above).
int graphics_clock_near(const ClockTable& table, int memory, int wanted) {
  const auto it = table.graphics_mhz.find(memory);
  if (it == table.graphics_mhz.end() || it->second.empty()) return wanted;
  std::optional<int> best;
  for (int clock : it->second) {
    if (clock <= wanted && (!best || clock > *best)) best = clock;
  }
  return best ? *best : *std::min_element(it->second.begin(), it->second.end());
}

void require(bool condition, const std::string& what) {
  if (!condition) throw std::invalid_argument(what);
}

// A clock in MHz or a power limit in W as this process would have read it: null,
// or a positive number (a whole one for clocks).
template <typename T>
std::optional<T> state_value(const json& state, const char* key) {
  if (!state.contains(key) || state.at(key).is_null()) return std::nullopt;
  const json& value = state.at(key);
  const bool number = std::is_integral_v<T> ? value.is_number_integer() : value.is_number();
  require(number && value.get<double>() > 0 && value.get<double>() <= std::numeric_limits<int>::max(),
          fmt::format("original_state.{} is {}, not null or a positive {}", key, value.dump(),
                      std::is_integral_v<T> ? "whole number" : "number"));
  return value.get<T>();
}

template <typename T>
void require_pair(const std::optional<T>& low, const std::optional<T>& high, const std::string& what) {
  require(low.has_value() == high.has_value(), "original_state has only one of the two " + what);
  require(!low || *low <= *high, "original_state's " + what + " are the wrong way round");
}

ControlState parsed_state(const json& state) {
  require(state.is_object(), "original_state is not an object");
  ControlState parsed;
  parsed.locked_sm_min_mhz = state_value<int>(state, "locked_sm_min_mhz");
  parsed.locked_sm_max_mhz = state_value<int>(state, "locked_sm_max_mhz");
  parsed.locked_mem_min_mhz = state_value<int>(state, "locked_mem_min_mhz");
  parsed.locked_mem_max_mhz = state_value<int>(state, "locked_mem_max_mhz");
  parsed.application_graphics_mhz = state_value<int>(state, "application_graphics_mhz");
  parsed.application_memory_mhz = state_value<int>(state, "application_memory_mhz");
  parsed.power_limit_w = state_value<double>(state, "power_limit_w");
  require_pair(parsed.locked_sm_min_mhz, parsed.locked_sm_max_mhz, "locked SM clocks");
  require_pair(parsed.locked_mem_min_mhz, parsed.locked_mem_max_mhz, "locked memory clocks");
  require(parsed.application_graphics_mhz.has_value() == parsed.application_memory_mhz.has_value(),
          "original_state has only one of the two application clocks");
  return parsed;
}

bool touches(const std::vector<std::string>& touched, const char* knob) {
  return std::find(touched.begin(), touched.end(), knob) != touched.end();
}

}  // namespace

std::vector<std::string> ClockKnobControl::knobs() const {
  return {sm_lock, memory_lock, application_clocks, power_limit};
}

json ClockKnobControl::save() { return gpu_.control_state(); }

ClockKnobControl::Targets ClockKnobControl::targets_for(const Setting& setting, const ControlState& found) {
  Targets targets;
  const bool sm_by_application = sm_lock_works_ == false;
  const bool mem_by_application = mem_lock_works_ == false;
  if (!sm_by_application) targets.sm_lock_mhz = setting.sm_mhz;
  if (!mem_by_application) targets.mem_lock_mhz = setting.mem_mhz;
  const bool application_sm = sm_by_application && setting.sm_mhz;
  const bool application_mem = mem_by_application && setting.mem_mhz;
  if (application_sm || application_mem) {
    if (!table_) table_ = gpu_.clock_table();
    const int base_memory = found.application_memory_mhz.value_or(table_->default_memory_mhz.value_or(0));
    const int base_graphics =
        found.application_graphics_mhz.value_or(table_->default_graphics_mhz.value_or(0));
    const int memory = application_mem ? *setting.mem_mhz : base_memory;
    const int graphics =
        application_sm ? *setting.sm_mhz : graphics_clock_near(*table_, memory, base_graphics);
    targets.application_mhz = std::pair{memory, graphics};
  }
  targets.power_limit_w = setting.power_limit_w;
  return targets;
}

void ClockKnobControl::apply(const Setting& setting, const json& saved, Changes& changes) {
  const ControlState found = saved.get<ControlState>();
  // The lock calls come first: when one is missing, the application-clock
  // targets computed afterwards take over its knob.
  apply_sm(targets_for(setting, found), changes);
  apply_mem(targets_for(setting, found), changes);
  apply_application(targets_for(setting, found), changes);
  apply_power(targets_for(setting, found), changes);
}

void ClockKnobControl::apply_sm(const Targets& targets, Changes& changes) {
  if (targets.sm_lock_mhz == applied_.sm_lock_mhz) return;
  if (!targets.sm_lock_mhz) {
    changes.restore(sm_lock);
  } else {
    try {
      changes.change(sm_lock, [&] { gpu_.lock_sm_clocks(*targets.sm_lock_mhz, *targets.sm_lock_mhz); });
      sm_lock_works_ = true;
    } catch (const NotSupportedError&) {
      if (sm_lock_works_) throw;
      sm_lock_works_ = false;  // pre-Volta: application clocks from now on
      changes.forget(sm_lock);
      return;
    }
  }
  applied_.sm_lock_mhz = targets.sm_lock_mhz;
}

void ClockKnobControl::apply_mem(const Targets& targets, Changes& changes) {
  if (targets.mem_lock_mhz == applied_.mem_lock_mhz) return;
  if (!targets.mem_lock_mhz) {
    changes.restore(memory_lock);
  } else {
    try {
      changes.change(memory_lock,
                     [&] { gpu_.lock_memory_clocks(*targets.mem_lock_mhz, *targets.mem_lock_mhz); });
      mem_lock_works_ = true;
    } catch (const NotSupportedError&) {
      if (mem_lock_works_) throw;
      mem_lock_works_ = false;  // before Ampere: memory through application clocks
      changes.forget(memory_lock);
      return;
    }
  }
  applied_.mem_lock_mhz = targets.mem_lock_mhz;
}

void ClockKnobControl::apply_application(const Targets& targets, Changes& changes) {
  if (targets.application_mhz == applied_.application_mhz) return;
  if (!targets.application_mhz) {
    changes.restore(application_clocks);
  } else {
    changes.change(application_clocks, [&] {
      gpu_.set_application_clocks(targets.application_mhz->first, targets.application_mhz->second);
    });
  }
  applied_.application_mhz = targets.application_mhz;
}

void ClockKnobControl::apply_power(const Targets& targets, Changes& changes) {
  if (targets.power_limit_w == applied_.power_limit_w) return;
  if (!targets.power_limit_w) {
    changes.restore(power_limit);
  } else {
    changes.change(power_limit, [&] { gpu_.set_power_limit(*targets.power_limit_w); });
  }
  applied_.power_limit_w = targets.power_limit_w;
}

ControlStep ClockKnobControl::restore_step(const std::string& knob, const json& saved) {
  const ControlState original = saved.get<ControlState>();
  if (knob == sm_lock) {
    if (original.locked_sm_min_mhz && original.locked_sm_max_mhz) {
      const int low = *original.locked_sm_min_mhz, high = *original.locked_sm_max_mhz;
      return {fmt::format("SM clocks locked again to {}–{} MHz", low, high),
              [this, low, high] { gpu_.lock_sm_clocks(low, high); }};
    }
    return {"SM clock lock reset", [this] { gpu_.reset_sm_clocks(); }};
  }
  if (knob == memory_lock) {
    if (original.locked_mem_min_mhz && original.locked_mem_max_mhz) {
      const int low = *original.locked_mem_min_mhz, high = *original.locked_mem_max_mhz;
      return {fmt::format("memory clocks locked again to {}–{} MHz", low, high),
              [this, low, high] { gpu_.lock_memory_clocks(low, high); }};
    }
    return {"memory clock lock reset", [this] { gpu_.reset_memory_clocks(); }};
  }
  if (knob == application_clocks) {
    if (original.application_memory_mhz && original.application_graphics_mhz) {
      const int memory = *original.application_memory_mhz, graphics = *original.application_graphics_mhz;
      return {fmt::format("application clocks set back to graphics {} MHz, memory {} MHz", graphics, memory),
              [this, memory, graphics] { gpu_.set_application_clocks(memory, graphics); }};
    }
    return {"application clocks reset to the default", [this] { gpu_.reset_application_clocks(); }};
  }
  if (original.power_limit_w) {
    const double watts = *original.power_limit_w;
    return {fmt::format("power limit set back to {:g} W", watts), [this, watts] { gpu_.set_power_limit(watts); }};
  }
  return {"power limit reset to the default", [this] { gpu_.reset_power_limit(); }};
}

bool ClockKnobControl::as_found(const std::string& knob, const json& saved) {
  const ControlState now = gpu_.control_state();
  const ControlState found = saved.get<ControlState>();
  if (knob == sm_lock) {
    return now.locked_sm_min_mhz == found.locked_sm_min_mhz && now.locked_sm_max_mhz == found.locked_sm_max_mhz;
  }
  if (knob == memory_lock) {
    return now.locked_mem_min_mhz == found.locked_mem_min_mhz &&
           now.locked_mem_max_mhz == found.locked_mem_max_mhz;
  }
  if (knob == application_clocks) {
    return now.application_graphics_mhz == found.application_graphics_mhz &&
           now.application_memory_mhz == found.application_memory_mhz;
  }
  return now.power_limit_w == found.power_limit_w;
}

void ClockKnobControl::check_saved(const json& saved, const std::vector<std::string>& touched) const {
  parsed_state(saved);
  const std::vector<std::string> known = knobs();
  for (const std::string& knob : touched) {
    require(std::find(known.begin(), known.end(), knob) != known.end(), "unknown knob \"" + knob + "\"");
  }
}

std::optional<std::string> ClockKnobControl::implausible(const json& saved, const std::vector<std::string>& touched) {
  const ControlState found = parsed_state(saved);
  if (touches(touched, power_limit) && found.power_limit_w) {
    const PowerLimits limits = gpu_.power_limits();
    if (limits.min_w && limits.max_w &&
        (*found.power_limit_w < *limits.min_w || *found.power_limit_w > *limits.max_w)) {
      return fmt::format("a power limit of {:g} W, outside the GPU's {:g}–{:g} W", *found.power_limit_w,
                         *limits.min_w, *limits.max_w);
    }
  }
  return implausible_clocks(found, touched);
}

std::optional<std::string> ClockKnobControl::implausible_clocks(const ControlState& found,
                                                                const std::vector<std::string>& touched) {
  const bool application = touches(touched, application_clocks) && found.application_graphics_mhz;
  const bool sm = touches(touched, sm_lock) && found.locked_sm_min_mhz;
  const bool memory = touches(touched, memory_lock) && found.locked_mem_min_mhz;
  if (!application && !sm && !memory) return std::nullopt;
  const ClockTable table = gpu_.clock_table();
  if (table.memory_mhz.empty()) return std::nullopt;  // the GPU lists no clocks to check against
  if (application && !table.supports(*found.application_memory_mhz, *found.application_graphics_mhz)) {
    return fmt::format(
        "application clocks of graphics {} MHz and memory {} MHz, a pair the GPU does not list",
        *found.application_graphics_mhz, *found.application_memory_mhz);
  }
  const auto outside = [](int low, int high, const std::vector<int>& supported) {
    const auto [lowest, highest] = std::minmax_element(supported.begin(), supported.end());
    return low < *lowest || high > *highest;
  };
  if (sm && outside(*found.locked_sm_min_mhz, *found.locked_sm_max_mhz, table.all_graphics_mhz())) {
    return fmt::format("SM clocks locked to {}–{} MHz, outside the GPU's clocks", *found.locked_sm_min_mhz,
                       *found.locked_sm_max_mhz);
  }
  if (memory && outside(*found.locked_mem_min_mhz, *found.locked_mem_max_mhz, table.memory_mhz)) {
    return fmt::format("memory clocks locked to {}–{} MHz, outside the GPU's clocks", *found.locked_mem_min_mhz,
                       *found.locked_mem_max_mhz);
  }
  return std::nullopt;
}

}  // namespace dvfslab
