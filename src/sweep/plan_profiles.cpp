// The workload_profile knob → settings for one GPU: each profile measured on its
// own, against the GPU's list of supported profiles.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "dvfslab/error.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/workload_power_profiles.hpp"

namespace dvfslab {
namespace {

std::string names_of(const std::vector<WorkloadPowerProfile>& profiles) {
  std::vector<std::string> names;
  for (const WorkloadPowerProfile& profile : profiles) names.push_back(profile.name);
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

std::vector<Setting> expand_profile_settings(const ProfileKnobSpec& spec, Gpu& gpu) {
  if (spec.unset()) return {};
  const auto profiles = workload_power_profiles(gpu);
  if (!profiles || profiles->supported.empty()) {
    throw NotSupportedError(fmt::format("{}: {} has no workload power profiles (its backend, driver or the GPU "
                                        "itself), so workload_profile cannot be swept; remove the knob",
                                        spec.where, gpu.identity().name));
  }
  std::vector<int> ids;
  if (spec.all) {
    for (const WorkloadPowerProfile& profile : profiles->supported) ids.push_back(profile.id);
  } else {
    for (int id : spec.ids) {
      const bool supported = std::any_of(profiles->supported.begin(), profiles->supported.end(),
                                         [id](const WorkloadPowerProfile& profile) { return profile.id == id; });
      if (!supported) {
        throw ConfigError(spec.where, fmt::format("{} does not support the workload power profile {}; it supports {}",
                                                  gpu.identity().name, workload_power_profile_name(id),
                                                  names_of(profiles->supported)));
      }
      ids.push_back(id);
    }
  }
  std::sort(ids.begin(), ids.end());
  std::vector<Setting> settings;
  for (int id : ids) {
    Setting setting;
    setting.workload_profile = id;
    settings.push_back(setting);
  }
  return settings;
}

std::vector<Setting> plan_settings(const Knobs& knobs, Gpu& gpu) {
  std::vector<Setting> settings =
      expand_settings(knobs, gpu.clock_table(), gpu.power_limits(), gpu.identity().name);
  for (Setting& setting : expand_profile_settings(knobs.workload_profile, gpu)) settings.push_back(setting);
  return settings;
}

}  // namespace dvfslab
