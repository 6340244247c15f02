#include "gpu/workload_profile_knob.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "dvfslab/error.hpp"
#include "dvfslab/workload_power_profiles.hpp"

namespace dvfslab {
namespace {

using nlohmann::json;

constexpr const char* knob_name = workload_profile_knob;
// null where the GPU had no profiles when the state was saved.
constexpr const char* saved_key = "requested_workload_profiles";
// NVML's profile masks are 255 bits wide.
constexpr int highest_profile_id = 254;

std::string names_of(const std::vector<int>& ids) {
  std::vector<std::string> names;
  for (int id : ids) names.push_back(workload_power_profile_name(id));
  return fmt::format("{}", fmt::join(names, ", "));
}

// The ids `saved` records, ascending; std::invalid_argument naming what is wrong.
std::vector<int> saved_ids(const json& saved) {
  if (!saved.is_object() || !saved.contains(saved_key) || !saved.at(saved_key).is_array()) {
    throw std::invalid_argument(fmt::format("original_state.{} is not a list of profile ids", saved_key));
  }
  std::set<int> ids;
  for (const json& id : saved.at(saved_key)) {
    if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() > highest_profile_id ||
        !ids.insert(id.get<int>()).second) {
      throw std::invalid_argument(fmt::format("original_state.{} holds {}, not distinct profile ids 0–{}",
                                              saved_key, id.dump(), highest_profile_id));
    }
  }
  return {ids.begin(), ids.end()};
}

// The ids of `ids` that `profiles` does not list as supported.
std::vector<int> unsupported(const WorkloadPowerProfiles& profiles, const std::vector<int>& ids) {
  std::vector<int> out;
  for (int id : ids) {
    const bool supported = std::any_of(profiles.supported.begin(), profiles.supported.end(),
                                       [id](const WorkloadPowerProfile& profile) { return profile.id == id; });
    if (!supported) out.push_back(id);
  }
  return out;
}

bool touches(const std::vector<std::string>& touched) {
  return std::find(touched.begin(), touched.end(), knob_name) != touched.end();
}

}  // namespace

std::vector<std::string> WorkloadProfileKnob::knobs() const { return {knob_name}; }

json WorkloadProfileKnob::save() {
  const auto profiles = workload_power_profiles(gpu_);
  return {{saved_key, profiles ? json(profiles->requested) : json(nullptr)}};
}

WorkloadPowerProfiles WorkloadProfileKnob::requestable(const std::vector<int>& wanted) {
  auto profiles = workload_power_profiles(gpu_);
  if (!profiles || gpu_.read_only()) {
    // The free function says why in one line: read-only mode, or no profiles.
    request_workload_power_profiles(gpu_, wanted);
  }
  if (const std::vector<int> unknown = unsupported(*profiles, wanted); !unknown.empty()) {
    std::vector<int> offered;
    for (const WorkloadPowerProfile& profile : profiles->supported) offered.push_back(profile.id);
    throw NotSupportedError(fmt::format("GPU {} ({}) does not support the workload power profile {}; it supports {}",
                                        gpu_.identity().index, gpu_.identity().name, names_of(unknown),
                                        offered.empty() ? std::string("none") : names_of(offered)));
  }
  return *profiles;
}

void WorkloadProfileKnob::request_exactly(const std::vector<int>& wanted) {
  const WorkloadPowerProfiles profiles = requestable(wanted);
  std::vector<int> to_remove, to_add;
  std::set_difference(profiles.requested.begin(), profiles.requested.end(), wanted.begin(), wanted.end(),
                      std::back_inserter(to_remove));
  std::set_difference(wanted.begin(), wanted.end(), profiles.requested.begin(), profiles.requested.end(),
                      std::back_inserter(to_add));
  if (!to_remove.empty()) clear_workload_power_profiles(gpu_, to_remove);
  if (!to_add.empty()) request_workload_power_profiles(gpu_, to_add);
}

void WorkloadProfileKnob::apply(const Setting& setting, const json& /*saved*/, Changes& changes) {
  if (setting.workload_profile == applied_) return;
  if (!setting.workload_profile) {
    changes.restore(knob_name);
  } else {
    const std::vector<int> wanted{*setting.workload_profile};
    requestable(wanted);  // refused before the knob is journaled
    changes.change(knob_name, [&] { request_exactly(wanted); });
  }
  applied_ = setting.workload_profile;
}

ControlStep WorkloadProfileKnob::restore_step(const std::string& /*knob*/, const json& saved) {
  const std::vector<int> wanted = saved_ids(saved);
  const std::string description = wanted.empty()
                                      ? std::string("requested workload power profiles cleared")
                                      : "requested workload power profiles set back to " + names_of(wanted);
  return {description, [this, wanted] { request_exactly(wanted); }};
}

bool WorkloadProfileKnob::as_found(const std::string& /*knob*/, const json& saved) {
  const auto profiles = workload_power_profiles(gpu_);
  return profiles && profiles->requested == saved_ids(saved);
}

void WorkloadProfileKnob::check_saved(const json& saved, const std::vector<std::string>& touched) const {
  const bool recorded = saved.is_object() && saved.contains(saved_key) && !saved.at(saved_key).is_null();
  if (recorded || touches(touched)) saved_ids(saved);
}

std::optional<std::string> WorkloadProfileKnob::implausible(const json& saved,
                                                            const std::vector<std::string>& touched) {
  if (!touches(touched)) return std::nullopt;
  const auto profiles = workload_power_profiles(gpu_);
  if (!profiles) return std::string("requested workload power profiles on a GPU that has none");
  const std::vector<int> unknown = unsupported(*profiles, saved_ids(saved));
  if (unknown.empty()) return std::nullopt;
  return fmt::format("requested workload power profiles the GPU does not support ({})", names_of(unknown));
}

}  // namespace dvfslab
