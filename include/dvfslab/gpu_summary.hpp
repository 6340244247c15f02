#pragma once
// The human-readable summary of a GPU that `dvfslab info` prints.
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/workload_power_profiles.hpp"

namespace dvfslab {

// "345–1980 MHz, step 15 (110 clocks)" when the clocks are evenly spaced, else
// the list: "3201, 2201 MHz". Empty: "none reported".
std::string format_clock_list(const std::vector<int>& clocks_mhz);

// "max-q, compute, memory-bound; requested: compute; enforced: compute", or that
// the GPU or its driver does not support workload power profiles (nullopt).
std::string format_workload_power_profiles(const std::optional<WorkloadPowerProfiles>& profiles);

// Several lines: identity, clock table, power limits, a live reading and the
// clock-event reasons. A simulated GPU is marked SIMULATED in its first line.
std::string describe_gpu_text(Gpu& gpu);

}  // namespace dvfslab
