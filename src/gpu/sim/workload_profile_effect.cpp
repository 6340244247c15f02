#include "gpu/sim/workload_profile_effect.hpp"

#include <algorithm>

namespace dvfslab::sim {
namespace {

const SimWorkloadProfile* find_profile(const SimGpuSpec& spec, int id) {
  const auto found = std::find_if(spec.workload_profiles.begin(), spec.workload_profiles.end(),
                                  [id](const SimWorkloadProfile& profile) { return profile.id == id; });
  return found == spec.workload_profiles.end() ? nullptr : &*found;
}

}  // namespace

std::vector<int> enforced_workload_profiles(const SimGpuSpec& spec, const std::vector<int>& requested) {
  std::vector<const SimWorkloadProfile*> by_priority;
  for (int id : requested) {
    if (const SimWorkloadProfile* profile = find_profile(spec, id)) by_priority.push_back(profile);
  }
  std::stable_sort(by_priority.begin(), by_priority.end(),
                   [](const auto* a, const auto* b) { return a->priority < b->priority; });
  std::vector<int> enforced;
  for (const SimWorkloadProfile* profile : by_priority) {
    const bool blocked = std::any_of(enforced.begin(), enforced.end(), [&](int chosen) {
      return std::find(profile->conflicts.begin(), profile->conflicts.end(), chosen) !=
             profile->conflicts.end();
    });
    if (!blocked) enforced.push_back(profile->id);
  }
  std::sort(enforced.begin(), enforced.end());
  return enforced;
}

double workload_profile_power_cap_w(const SimGpuSpec& spec, const std::vector<int>& enforced) {
  // The highest limit the GPU allows caps nothing: a limit set above the default stays in force.
  double cap_w = spec.power_limit_max_w;
  for (int id : enforced) {
    const SimWorkloadProfile* profile = find_profile(spec, id);
    if (profile != nullptr && profile->power_cap_share < 1.0) {
      cap_w = std::min(
          cap_w, std::max(spec.power_limit_min_w, profile->power_cap_share * spec.power_limit_default_w));
    }
  }
  return cap_w;
}

WorkloadPowerProfiles describe_workload_profiles(const SimGpuSpec& spec, const std::vector<int>& requested) {
  WorkloadPowerProfiles profiles;
  for (const SimWorkloadProfile& profile : spec.workload_profiles) {
    profiles.supported.push_back({profile.id, workload_power_profile_name(profile.id), profile.priority});
  }
  std::sort(profiles.supported.begin(), profiles.supported.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  profiles.requested = requested;
  profiles.enforced = enforced_workload_profiles(spec, requested);
  return profiles;
}

}  // namespace dvfslab::sim
