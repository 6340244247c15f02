#include "fake_profiles.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "dvfslab/error.hpp"
#include "dvfslab/workload_power_profiles.hpp"
#include "gpu/nvml/nvml_profile_mask.hpp"

namespace dvfslab::fake_nvml {

FakeProfiles profiles_from_environment(const std::string& value) {
  FakeProfiles profiles;
  if (value == "unsupported") {
    profiles.supported = false;
    return profiles;
  }
  if (value.empty()) {
    profiles.offered = {nvml::power_profile_max_p,         nvml::power_profile_max_q,
                        nvml::power_profile_compute,       nvml::power_profile_memory_bound,
                        nvml::power_profile_llm_inference, nvml::power_profile_llm_training};
    return profiles;
  }
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t comma = std::min(value.find(',', start), value.size());
    const std::string name = value.substr(start, comma - start);
    start = comma + 1;
    const auto id = workload_power_profile_id(name);
    if (!id || *id >= static_cast<int>(nvml::workload_power_max_profiles)) {
      throw Error(
          fmt::format("DVFSLAB_FAKE_NVML_PROFILES names '{}', which is not a workload power profile (max-q, "
                      "compute, ...)",
                      name));
    }
    profiles.offered.push_back(*id);
  }
  std::sort(profiles.offered.begin(), profiles.offered.end());
  profiles.offered.erase(std::unique(profiles.offered.begin(), profiles.offered.end()),
                         profiles.offered.end());
  return profiles;
}

unsigned fake_profile_priority(int id) { return static_cast<unsigned>(id); }

std::vector<int> fake_profile_conflicts(int id) {
  switch (id) {
    case nvml::power_profile_max_p: return {nvml::power_profile_max_q};
    case nvml::power_profile_max_q: return {nvml::power_profile_max_p};
    case nvml::power_profile_compute: return {nvml::power_profile_memory_bound};
    case nvml::power_profile_memory_bound: return {nvml::power_profile_compute};
    default: return {};
  }
}

void fill_profiles_info(const FakeProfiles& profiles, nvml::WorkloadPowerProfilesInfo& info) {
  // Every entry is written: a caller's buffer is not zeroed, and stale entries
  // behind unset bits must not look like profiles.
  const unsigned version = info.version;
  info = nvml::WorkloadPowerProfilesInfo{};
  info.version = version;
  info.perf_profiles_mask = nvml::mask_of(profiles.offered);
  for (int id : profiles.offered) {
    nvml::WorkloadPowerProfileInfo& entry = info.perf_profile[id];
    entry.version = nvml::struct_version_1<nvml::WorkloadPowerProfileInfo>;
    entry.profile_id = static_cast<unsigned>(id);
    entry.priority = fake_profile_priority(id);
    entry.conflicting_mask = nvml::mask_of(fake_profile_conflicts(id));
  }
}

std::vector<int> enforced_profiles(const FakeProfiles& profiles) {
  std::vector<int> by_priority = profiles.requested;
  std::stable_sort(by_priority.begin(), by_priority.end(),
                   [](int a, int b) { return fake_profile_priority(a) < fake_profile_priority(b); });
  std::vector<int> enforced;
  for (int id : by_priority) {
    const std::vector<int> conflicts = fake_profile_conflicts(id);
    const bool blocked = std::any_of(enforced.begin(), enforced.end(), [&](int chosen) {
      return std::find(conflicts.begin(), conflicts.end(), chosen) != conflicts.end();
    });
    if (!blocked) enforced.push_back(id);
  }
  std::sort(enforced.begin(), enforced.end());
  return enforced;
}

}  // namespace dvfslab::fake_nvml
