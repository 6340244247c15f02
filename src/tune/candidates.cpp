// The knobs a tuner turns and the settings it may choose among on one GPU.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "dvfslab/error.hpp"
#include "dvfslab/tuner.hpp"
#include "dvfslab/workload_power_profiles.hpp"

namespace dvfslab {
namespace {

// Below this share of the boost clock, deep-learning work only gets slower and
// costlier (the static power outweighs the saving), so the search skips it.
constexpr double lowest_sm_share = 0.4;
constexpr std::size_t most_sm_clocks = 24;
constexpr int power_limit_steps = 8;

// Every `step`-th value, keeping the highest, so that at most `most` remain.
std::vector<int> thin(const std::vector<int>& ascending, std::size_t most) {
  if (ascending.size() <= most) return ascending;
  std::vector<int> kept;
  const double step = static_cast<double>(ascending.size() - 1) / static_cast<double>(most - 1);
  for (std::size_t i = 0; i < most; ++i)
    kept.push_back(ascending[static_cast<std::size_t>(std::lround(static_cast<double>(i) * step))]);
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  return kept;
}

std::vector<std::optional<int>> sm_values(const ClockTable& table, SmClockCandidates which) {
  const int memory =
      table.default_memory_mhz.value_or(table.memory_mhz.empty() ? 0 : table.memory_mhz.front());
  const auto found = table.graphics_mhz.find(memory);
  if (found == table.graphics_mhz.end() || found->second.empty())
    throw NotSupportedError(
        "the GPU lists no SM clocks at its default memory clock, so its SM clock cannot be tuned");
  std::vector<int> clocks(found->second.rbegin(), found->second.rend());
  const double lowest = lowest_sm_share * clocks.back();
  std::erase_if(clocks, [&](int mhz) { return mhz < lowest; });
  std::vector<std::optional<int>> values;
  if (which == SmClockCandidates::thinned) clocks = thin(clocks, most_sm_clocks);
  for (int mhz : clocks) values.emplace_back(mhz);
  return values;
}

std::vector<std::optional<int>> mem_values(const ClockTable& table) {
  if (table.memory_mhz.size() < 2)
    throw NotSupportedError(
        "the GPU has one memory clock, so there is no memory clock to tune; leave mem out of --knobs");
  return {table.memory_mhz.rbegin(), table.memory_mhz.rend()};
}

std::vector<std::optional<int>> power_values(const PowerLimits& limits, bool allow_above_found) {
  if (!limits.min_w || !limits.max_w || *limits.max_w <= *limits.min_w)
    throw NotSupportedError("the GPU reports no power limit range, so its power limit cannot be tuned");
  // A limit found below the maximum was set by someone (an administrator's cap): the
  // tuner stays under it unless told otherwise.
  const double ceiling =
      allow_above_found || !limits.current_w ? *limits.max_w : std::min(*limits.max_w, *limits.current_w);
  std::set<int> watts;
  if (ceiling > *limits.min_w) {
    for (int i = 0; i < power_limit_steps; ++i) {
      const double w = *limits.min_w + (ceiling - *limits.min_w) * i / (power_limit_steps - 1);
      watts.insert(static_cast<int>(std::ceil(w - 1e-9)));
    }
  }
  std::erase_if(watts, [&](int w) { return w < *limits.min_w || w > ceiling; });
  return {watts.begin(), watts.end()};
}

// One setting per workload power profile the GPU supports, each requested alone.
std::vector<Setting> profile_settings(Gpu& gpu) {
  const auto profiles = workload_power_profiles(gpu);
  if (!profiles || profiles->supported.empty()) {
    throw NotSupportedError(
        fmt::format("{} has no workload power profiles (its backend, driver or the GPU itself; "
                    "`dvfslab info` says which), so there is no profile to tune",
                    gpu.identity().name));
  }
  std::vector<Setting> settings;
  for (const WorkloadPowerProfile& profile : profiles->supported) {
    Setting setting;
    setting.workload_profile = profile.id;
    settings.push_back(setting);
  }
  std::sort(settings.begin(), settings.end());
  return settings;
}

}  // namespace

std::string_view to_string(TuneKnob knob) {
  switch (knob) {
    case TuneKnob::sm: return "sm";
    case TuneKnob::mem: return "mem";
    case TuneKnob::pl: return "pl";
    case TuneKnob::profile: return "profile";
  }
  return "?";
}

std::vector<TuneKnob> parse_tune_knobs(std::string_view text) {
  std::vector<TuneKnob> knobs;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view name = text.substr(start, comma - start);
    TuneKnob knob;
    if (name == "sm")
      knob = TuneKnob::sm;
    else if (name == "mem")
      knob = TuneKnob::mem;
    else if (name == "pl")
      knob = TuneKnob::pl;
    else if (name == "profile")
      knob = TuneKnob::profile;
    else
      throw ConfigError(fmt::format(
          "unknown knob '{}' in '{}'; give a comma-separated list of sm, mem, pl, or profile alone", name,
          text));
    if (std::find(knobs.begin(), knobs.end(), knob) != knobs.end())
      throw ConfigError(fmt::format("knob '{}' is given twice in '{}'", name, text));
    knobs.push_back(knob);
    start = comma + 1;
  }
  if (knobs.size() > 1 && std::find(knobs.begin(), knobs.end(), TuneKnob::profile) != knobs.end()) {
    throw ConfigError(
        fmt::format("'{}': profile is tuned on its own (a workload power profile runs with the "
                    "clocks and power limit as found, not crossed with them): give profile",
                    text));
  }
  return knobs;
}

std::vector<Setting> tune_candidates(Gpu& gpu, const std::vector<TuneKnob>& knobs,
                                     bool allow_above_found_power_limit, SmClockCandidates sm_clocks) {
  if (std::find(knobs.begin(), knobs.end(), TuneKnob::profile) != knobs.end()) return profile_settings(gpu);
  const bool has_pl = std::find(knobs.begin(), knobs.end(), TuneKnob::pl) != knobs.end();
  return tune_candidates(gpu.clock_table(), has_pl ? gpu.power_limits() : PowerLimits{}, knobs,
                         allow_above_found_power_limit, sm_clocks);
}

std::vector<Setting> tune_candidates(const ClockTable& table, const PowerLimits& limits,
                                     const std::vector<TuneKnob>& knobs, bool allow_above_found_power_limit,
                                     SmClockCandidates sm_clocks) {
  const auto has = [&](TuneKnob knob) { return std::find(knobs.begin(), knobs.end(), knob) != knobs.end(); };
  if (has(TuneKnob::profile))
    throw ConfigError("workload power profiles are tuned from the GPU itself, not from a clock table");
  // Each knob's values with "left as found" (absent), so that every knob can stay at its default.
  std::vector<std::optional<int>> sm{std::nullopt};
  std::vector<std::optional<int>> mem{std::nullopt};
  std::vector<std::optional<int>> pl{std::nullopt};
  if (has(TuneKnob::sm))
    for (auto v : sm_values(table, sm_clocks)) sm.push_back(v);
  if (has(TuneKnob::mem))
    for (auto v : mem_values(table)) mem.push_back(v);
  if (has(TuneKnob::pl))
    for (auto v : power_values(limits, allow_above_found_power_limit)) pl.push_back(v);
  std::vector<Setting> settings;
  for (const auto& s : sm) {
    for (const auto& m : mem) {
      // An SM clock is listed per memory clock: keep the pairs the GPU supports.
      if (s && m && !table.supports(*m, *s)) continue;
      for (const auto& p : pl) {
        Setting setting{s, m, p};
        if (!setting.is_default()) settings.push_back(setting);
      }
    }
  }
  std::sort(settings.begin(), settings.end());
  return settings;
}

}  // namespace dvfslab
