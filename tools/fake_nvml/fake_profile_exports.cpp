// The fake's workload-power-profile entry points (docs/fake-nvml.md#workload-power-profiles),
// under NVML's own names and C linkage. Only the current driver's fake has them:
// drivers before the profiles lack all four.
#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "dvfslab/workload_power_profiles.hpp"
#include "export_checks.hpp"
#include "fake_calls.hpp"
#include "fake_profiles.hpp"
#include "fake_state.hpp"
#include "gpu/nvml/nvml_profile_mask.hpp"

namespace nvml = dvfslab::nvml;
namespace fake = dvfslab::fake_nvml;

namespace {

// Whether `given` is a structure of version 1, as NVML answers before it looks at
// the device: INVALID_ARGUMENT for none, ARGUMENT_VERSION_MISMATCH for another version.
template <class Struct>
nvml::Return check_version_1(const Struct* given) {
  if (given == nullptr) return nvml::error_invalid_argument;
  if (given->version != nvml::struct_version_1<Struct>) return nvml::error_argument_version_mismatch;
  return nvml::success;
}

// A workload-power-profile setter: logged first, like every setter, then checked
// as NVML does (the struct's version, permission) and handed to the simulated GPU.
template <class Change>
nvml::Return profile_setter(nvml::Device handle, std::string_view function,
                            const nvml::WorkloadPowerRequestedProfiles* request, Change&& change) {
  return fake::with_device(handle, [&](fake::FakeDevice& device) {
    const std::vector<int> ids =
        request ? nvml::ids_in(request->requested_profiles_mask) : std::vector<int>{};
    std::string names;
    for (int id : ids) {
      if (!names.empty()) names += ',';
      names += dvfslab::workload_power_profile_name(id);
    }
    fake::log_setter_call(fmt::format("{} device={} profiles={}", function, device.index, names));
    if (const nvml::Return code = check_version_1(request); code != nvml::success) return code;
    if (device.profiles_hidden) return nvml::error_not_supported;
    if (fake::refuses_setters(fake::state()->faults, device.index)) return nvml::error_no_permission;
    // The simulated GPU refuses a profile it does not offer (INVALID_ARGUMENT) and
    // a request on a model without profiles (NOT_SUPPORTED).
    change(*device.gpu, ids);
    fake::save_control_state();
    return nvml::success;
  });
}

}  // namespace

FAKE_NVML_EXPORT nvml::Return nvmlDeviceWorkloadPowerProfileGetProfilesInfo(
    nvml::Device handle, nvml::WorkloadPowerProfilesInfo* info) {
  return fake::with_device(handle, [&](fake::FakeDevice& device) {
    if (const nvml::Return code = check_version_1(info); code != nvml::success) return code;
    if (device.profiles_hidden || device.gpu->spec().workload_profiles.empty())
      return nvml::error_not_supported;
    fake::fill_profiles_info(device.gpu->spec(), *info);
    return nvml::success;
  });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceWorkloadPowerProfileGetCurrentProfiles(
    nvml::Device handle, nvml::WorkloadPowerCurrentProfiles* current) {
  return fake::with_device(handle, [&](fake::FakeDevice& device) {
    if (const nvml::Return code = check_version_1(current); code != nvml::success) return code;
    const auto profiles = device.gpu->read_workload_power_profiles();
    if (device.profiles_hidden || !profiles) return nvml::error_not_supported;
    std::vector<int> offered;
    for (const dvfslab::WorkloadPowerProfile& profile : profiles->supported) offered.push_back(profile.id);
    current->perf_profiles_mask = nvml::mask_of(offered);
    current->requested_profiles_mask = nvml::mask_of(profiles->requested);
    current->enforced_profiles_mask = nvml::mask_of(profiles->enforced);
    return nvml::success;
  });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceWorkloadPowerProfileSetRequestedProfiles(
    nvml::Device handle, nvml::WorkloadPowerRequestedProfiles* request) {
  return profile_setter(handle, "nvmlDeviceWorkloadPowerProfileSetRequestedProfiles", request,
                        [](dvfslab::SimGpu& gpu, const std::vector<int>& ids) {
                          gpu.add_requested_workload_power_profiles(ids);
                        });
}
FAKE_NVML_EXPORT nvml::Return nvmlDeviceWorkloadPowerProfileClearRequestedProfiles(
    nvml::Device handle, nvml::WorkloadPowerRequestedProfiles* request) {
  return profile_setter(handle, "nvmlDeviceWorkloadPowerProfileClearRequestedProfiles", request,
                        [](dvfslab::SimGpu& gpu, const std::vector<int>& ids) {
                          gpu.remove_requested_workload_power_profiles(ids);
                        });
}

FAKE_NVML_CHECK_EXPORT(device_workload_power_profile_get_profiles_info,
                       nvmlDeviceWorkloadPowerProfileGetProfilesInfo);
FAKE_NVML_CHECK_EXPORT(device_workload_power_profile_get_current_profiles,
                       nvmlDeviceWorkloadPowerProfileGetCurrentProfiles);
FAKE_NVML_CHECK_EXPORT(device_workload_power_profile_set_requested_profiles,
                       nvmlDeviceWorkloadPowerProfileSetRequestedProfiles);
FAKE_NVML_CHECK_EXPORT(device_workload_power_profile_clear_requested_profiles,
                       nvmlDeviceWorkloadPowerProfileClearRequestedProfiles);
