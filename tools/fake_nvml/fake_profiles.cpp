#include "fake_profiles.hpp"

#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "gpu/nvml/nvml_profile_mask.hpp"

namespace dvfslab::fake_nvml {

bool hides_profiles(const std::string& setting) {
  if (setting.empty()) return false;
  if (setting == "unsupported") return true;
  throw Error(fmt::format("DVFSLAB_FAKE_NVML_PROFILES={} is neither empty nor 'unsupported'", setting));
}

void fill_profiles_info(const SimGpuSpec& spec, nvml::WorkloadPowerProfilesInfo& info) {
  // A caller's buffer is not zeroed: stale entries behind unset bits must not
  // look like profiles.
  const unsigned version = info.version;
  info = nvml::WorkloadPowerProfilesInfo{};
  info.version = version;
  std::vector<int> offered;
  for (const SimWorkloadProfile& profile : spec.workload_profiles) {
    offered.push_back(profile.id);
    nvml::WorkloadPowerProfileInfo& entry = info.perf_profile[profile.id];
    entry.version = nvml::struct_version_1<nvml::WorkloadPowerProfileInfo>;
    entry.profile_id = static_cast<unsigned>(profile.id);
    entry.priority = static_cast<unsigned>(profile.priority);
    entry.conflicting_mask = nvml::mask_of(profile.conflicts);
  }
  info.perf_profiles_mask = nvml::mask_of(offered);
}

}  // namespace dvfslab::fake_nvml
