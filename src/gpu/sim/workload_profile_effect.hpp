#pragma once
// Workload power profiles on a simulated GPU: which requested profiles are
// enforced, and the power cap they impose. Both are dvfslab's assumptions, not
// measurements (docs/simulation.md#workload-power-profiles).
#include <vector>

#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/workload_power_profiles.hpp"

namespace dvfslab::sim {

// The requested profiles taken in priority order, each kept unless it conflicts
// with one kept before it; ascending.
std::vector<int> enforced_workload_profiles(const SimGpuSpec& spec, const std::vector<int>& requested);
// The lowest cap the enforced profiles impose (their share of the default power
// limit, never below the minimum limit), or the maximum limit when none caps.
double workload_profile_power_cap_w(const SimGpuSpec& spec, const std::vector<int>& enforced);
// What `info` shows: the offered profiles, the request and what is enforced.
WorkloadPowerProfiles describe_workload_profiles(const SimGpuSpec& spec, const std::vector<int>& requested);

}  // namespace dvfslab::sim
