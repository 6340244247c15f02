#pragma once
// Whether a measured window ran the clocks its setting asked for: the check behind
// the clock_mismatch flag of sweeps and searches and behind the tuner's refusing a
// setting the GPU did not apply (docs/plans.md).
#include <cstddef>
#include <optional>

#include "dvfslab/types.hpp"

namespace dvfslab {

// Whether the GPUs `requested` was put on ran other clocks (by more than 1 % or
// 15 MHz, for clock-table rounding): in a stage of a per-GPU search the varied GPU
// alone (the others hold their own settings), else every GPU of the job, each on its
// own reading (their mean mixes GPUs that idle or hold other clocks). A GPU that
// reports its utilization is judged on its clocks while busy, and not at all when it
// never was.
bool clock_differs(const Setting& requested, const Measurement& m, std::optional<std::size_t> varied_gpu);

}  // namespace dvfslab
