#pragma once
// NVML's clock-event ("throttle") reason bits and their mapping onto dvfslab's
// vendor-neutral reasons (namespace throttle in dvfslab/types.hpp).
#include <cstdint>

namespace dvfslab::nvml {

// The neutral reasons behind an nvmlDeviceGetCurrentClocksEventReasons mask; a bit
// NVML may add later becomes throttle::other.
std::uint64_t neutral_throttle_reasons(unsigned long long nvml_reasons);
// The NVML mask a driver reports for neutral `reasons` (the fake NVML answers with it).
unsigned long long nvml_clock_event_reasons(std::uint64_t reasons);

}  // namespace dvfslab::nvml
