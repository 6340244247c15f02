#pragma once
// The fake's workload power profiles (docs/fake-nvml.md#workload-power-profiles):
// which profiles a device offers (DVFSLAB_FAKE_NVML_PROFILES), their priorities
// and conflicts, the requested set, and the arbitration that decides which
// requested profiles are enforced. The priorities, conflicts and arbitration are
// the fake's own assumptions, not a driver's documented behaviour.
#include <string>
#include <vector>

#include "gpu/nvml/nvml_api.hpp"

namespace dvfslab::fake_nvml {

struct FakeProfiles {
  bool supported = true;       // false: DVFSLAB_FAKE_NVML_PROFILES=unsupported
  std::vector<int> offered;    // profile ids, ascending
  std::vector<int> requested;  // profile ids, ascending
};

// The profiles DVFSLAB_FAKE_NVML_PROFILES describes: empty gives the default set
// (max-p, max-q, compute, memory-bound, llm-inference, llm-training),
// "unsupported" none, else a comma-separated list of profile names. Throws
// dvfslab::Error for an unknown name.
FakeProfiles profiles_from_environment(const std::string& value);

// A profile's priority in the fake: its id (the lower wins a conflict).
unsigned fake_profile_priority(int id);
// The profiles `id` cannot be enforced together with: max-p with max-q, compute
// with memory-bound.
std::vector<int> fake_profile_conflicts(int id);

// What nvmlDeviceWorkloadPowerProfileGetProfilesInfo fills in (after the caller's version).
void fill_profiles_info(const FakeProfiles& profiles, nvml::WorkloadPowerProfilesInfo& info);
// The requested profiles the fake enforces: in priority order, each one that does
// not conflict with one enforced before it.
std::vector<int> enforced_profiles(const FakeProfiles& profiles);

}  // namespace dvfslab::fake_nvml
