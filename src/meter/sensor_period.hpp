#pragma once
// How often a GPU's power / energy readings refresh, for backends that do not say.
#include "dvfslab/gpu.hpp"

namespace dvfslab::meter {

// Used when the period can neither be read nor measured (NVML's usual update
// period on recent GPUs).
inline constexpr double fallback_sensor_period_s = 0.1;

// The Gpu's own figure when it has one; otherwise, on a wall clock, watches the
// energy counter (or instant power) change for up to `budget_s` and takes the
// median interval between changes; the fallback when too few changes were seen.
double sensor_period_s(Gpu& gpu, double budget_s = 1.0);

}  // namespace dvfslab::meter
