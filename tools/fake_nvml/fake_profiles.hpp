#pragma once
// The fake's workload power profiles in NVML's structures
// (docs/fake-nvml.md#workload-power-profiles). The simulated GPU behind each fake
// device owns them: the profiles its spec offers (the H200's; none for the older
// models), the request, what is enforced and its effect on power. The fake turns
// them into NVML's masks and can hide them (DVFSLAB_FAKE_NVML_PROFILES=unsupported).
#include <string>

#include "dvfslab/sim_gpu.hpp"
#include "gpu/nvml/nvml_api.hpp"

namespace dvfslab::fake_nvml {

// Whether DVFSLAB_FAKE_NVML_PROFILES hides the profiles: "unsupported" does, empty
// does not; anything else throws dvfslab::Error.
bool hides_profiles(const std::string& setting);

// What nvmlDeviceWorkloadPowerProfileGetProfilesInfo fills in (after the caller's
// version): a bit and an entry per profile `spec` offers, every other entry zeroed.
void fill_profiles_info(const SimGpuSpec& spec, nvml::WorkloadPowerProfilesInfo& info);

}  // namespace dvfslab::fake_nvml
