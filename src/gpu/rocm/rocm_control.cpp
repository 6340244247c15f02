#include "gpu/rocm/rocm_control.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "gpu/rocm/rocm_gpu.hpp"

namespace dvfslab::rocm {
namespace {

using nlohmann::json;

constexpr const char* sclk_levels = "sclk_levels";
constexpr const char* mclk_levels = "mclk_levels";
constexpr const char* power_cap = "power_cap";
constexpr const char* perf_level = "perf_level";

void require(bool condition, const std::string& what) {
  if (!condition) throw std::invalid_argument(what);
}

// The saved state as save() writes it; throws std::invalid_argument naming what is not.
struct Saved {
  PerfLevel perf_level = perf_level_auto;
  std::optional<double> power_cap_w;
};

Saved parsed(const json& saved) {
  require(saved.is_object(), "original_state is not an object");
  require(saved.contains(perf_level) && saved.at(perf_level).is_string() &&
              perf_level_from_name(saved.at(perf_level).get<std::string>()),
          fmt::format("original_state.perf_level is {}, not one of ROCm SMI's performance levels",
                      saved.contains(perf_level) ? saved.at(perf_level).dump() : "missing"));
  Saved state;
  state.perf_level = *perf_level_from_name(saved.at(perf_level).get<std::string>());
  if (saved.contains("power_cap_w") && !saved.at("power_cap_w").is_null()) {
    const json& cap = saved.at("power_cap_w");
    require(cap.is_number() && cap.get<double>() > 0 && cap.get<double>() <= std::numeric_limits<int>::max(),
            fmt::format("original_state.power_cap_w is {}, not null or a positive number", cap.dump()));
    state.power_cap_w = cap.get<double>();
  }
  return state;
}

}  // namespace

std::vector<std::string> RocmControl::knobs() const {
  return {sclk_levels, mclk_levels, power_cap, perf_level};
}

json RocmControl::save() {
  const ControlState state = gpu_.control_state();
  return {{perf_level, std::string(perf_level_name(gpu_.performance_level()))},
          {"power_cap_w", state.power_limit_w ? json(*state.power_limit_w) : json(nullptr)}};
}

void RocmControl::apply(const Setting& setting, const json& /*saved*/, Changes& changes) {
  const bool manual = setting.sm_mhz || setting.mem_mhz;
  // Enabling levels switches the GPU to the manual performance level: that knob is
  // journaled first, so a restore puts the level found back. Each knob counts as
  // applied once its call went through, so a failed call is tried again next time.
  if (manual && !applied_.manual) {
    changes.change(perf_level, [&] { gpu_.set_performance_level(perf_level_manual); });
    applied_.manual = true;
  }
  if (setting.sm_mhz != applied_.sclk_mhz) {
    if (setting.sm_mhz) {
      changes.change(sclk_levels, [&] { gpu_.lock_sm_clocks(*setting.sm_mhz, *setting.sm_mhz); });
    } else {
      changes.restore(sclk_levels);
    }
    applied_.sclk_mhz = setting.sm_mhz;
  }
  if (setting.mem_mhz != applied_.mclk_mhz) {
    if (setting.mem_mhz) {
      changes.change(mclk_levels, [&] { gpu_.lock_memory_clocks(*setting.mem_mhz, *setting.mem_mhz); });
    } else {
      changes.restore(mclk_levels);
    }
    applied_.mclk_mhz = setting.mem_mhz;
  }
  if (setting.power_limit_w != applied_.power_cap_w) {
    if (setting.power_limit_w) {
      changes.change(power_cap, [&] { gpu_.set_power_limit(*setting.power_limit_w); });
    } else {
      changes.restore(power_cap);
    }
    applied_.power_cap_w = setting.power_limit_w;
  }
  if (!manual && applied_.manual) {
    changes.restore(perf_level);
    applied_.manual = false;
  }
}

ControlStep RocmControl::restore_step(const std::string& knob, const json& saved) {
  const Saved original = parsed(saved);
  if (knob == sclk_levels) return {"every SCLK level enabled again", [this] { gpu_.reset_sm_clocks(); }};
  if (knob == mclk_levels) return {"every MCLK level enabled again", [this] { gpu_.reset_memory_clocks(); }};
  if (knob == power_cap) {
    if (original.power_cap_w) {
      const double watts = *original.power_cap_w;
      return {fmt::format("power cap set back to {:g} W", watts),
              [this, watts] { gpu_.set_power_limit(watts); }};
    }
    return {"power cap reset to the default", [this] { gpu_.reset_power_limit(); }};
  }
  const PerfLevel level = original.perf_level;
  return {fmt::format("performance level set back to {}", perf_level_name(level)),
          [this, level] { gpu_.set_performance_level(level); }};
}

bool RocmControl::as_found(const std::string& knob, const json& saved) {
  const Saved found = parsed(saved);
  if (knob == power_cap) return gpu_.control_state().power_limit_w == found.power_cap_w;
  // The enabled levels cannot be read: with the performance level as found (and
  // every level enabled again) they are the driver's own.
  return gpu_.performance_level() == found.perf_level;
}

void RocmControl::check_saved(const json& saved, const std::vector<std::string>& touched) const {
  parsed(saved);
  const std::vector<std::string> known = knobs();
  for (const std::string& knob : touched) {
    require(std::find(known.begin(), known.end(), knob) != known.end(), "unknown knob \"" + knob + "\"");
  }
}

std::optional<std::string> RocmControl::implausible(const json& saved,
                                                    const std::vector<std::string>& touched) {
  const Saved found = parsed(saved);
  if (std::find(touched.begin(), touched.end(), power_cap) == touched.end() || !found.power_cap_w) {
    return std::nullopt;
  }
  const PowerLimits limits = gpu_.power_limits();
  if (limits.min_w && limits.max_w &&
      (*found.power_cap_w < *limits.min_w || *found.power_cap_w > *limits.max_w)) {
    return fmt::format("a power cap of {:g} W, outside the GPU's {:g}–{:g} W", *found.power_cap_w,
                       *limits.min_w, *limits.max_w);
  }
  return std::nullopt;
}

}  // namespace dvfslab::rocm
