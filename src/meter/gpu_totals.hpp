#pragma once
// The job's figures for one window from every GPU's figures for it.
#include <vector>

#include "dvfslab/types.hpp"

namespace dvfslab::meter {

// Sums what adds up over GPUs (energy, its error bound, power; the peak is the sum
// of each GPU's peak, an upper bound on the job's), takes the longest duration,
// averages the clock means, takes extremes of minima, maxima and throttle
// fractions, ORs the flags and counts the job's iterations once. A sum is absent
// when any GPU lacks its term. `per_gpu` must not be empty; it becomes the result's
// `gpus`.
Measurement job_totals(std::vector<GpuMeasurement> per_gpu);

}  // namespace dvfslab::meter
