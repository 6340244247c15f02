// The expected value of a measured line, estimated from its own noisy points, for
// the benchmarks that score a choice on a real dense line. A table that measured
// each setting once holds one draw per setting, so its least value is partly the
// luckiest draw; scoring against the line's expected value asks whether a choice
// is where the GPU really uses least. The estimate is a local quadratic regression
// (sweep/local_quadratic.hpp); bench/expected_curve.py is the same estimate for the
// Python benchmarks.
#pragma once

#include <cstddef>

#include "sweep/local_quadratic.hpp"

namespace dvfslab::bench {

// The benchmarks score a line this long (issue 27's long lines) against its expected
// energy as well, smoothed over this many settings on each side (the span
// dense_replay_search.py --expected-span used first).
inline constexpr std::size_t dense_line_settings = 30;
inline constexpr std::size_t expected_line_span = 7;

// The library's estimate (src/sweep/local_quadratic.hpp): the clock map learns from
// the same trend the benchmarks score against.
using search_detail::local_quadratic;

}  // namespace dvfslab::bench
