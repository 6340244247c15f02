#pragma once
// The documented range of every number in a plan (docs/plans.md, "Limits"). Every
// bound is finite, so no plan value can make a sweep wait forever, wrap an integer
// or expand into more points than memory holds.
#include <cstddef>
#include <cstdint>

namespace dvfslab {

struct NumberRange {
  double lo;
  double hi;
  bool lo_exclusive = false;  // (lo, hi] instead of [lo, hi]
};

struct IntegerRange {
  int lo;
  int hi;
};

namespace plan_limits {

inline constexpr double hour_s = 3600.0;
inline constexpr NumberRange wait_s{0.0, hour_s};  // settle_s, cooldown_s, warmup_s
inline constexpr NumberRange duration_s{0.0, hour_s, true};
inline constexpr NumberRange ci_target_pct{0.0, 100.0, true};
inline constexpr IntegerRange warmup_iterations{0, 1'000'000};
inline constexpr IntegerRange repetitions{1, 1000};  // repetitions, max_repetitions
inline constexpr IntegerRange batch_size{1, 1'000'000};
inline constexpr IntegerRange knob_value{1, 100'000};  // MHz or W, also range ends and bounds
inline constexpr IntegerRange knob_count{1, 100'000};  // every, count
// Points of a plan's grid (cases × settings, per GPU): even at 2 s per point, more
// would take over four days.
inline constexpr std::size_t max_grid_points = 100'000;
// A plan file: the study's built-in plan is under 2 KB. toml11's time grows with
// (values on a line) × (its length), so lines are bounded too (arrays may span lines).
inline constexpr std::size_t max_plan_bytes = 64 * 1024;
inline constexpr std::size_t max_line_bytes = 4096;
// Seeds stay exact wherever they are shown or stored as a double (JSON readers); it
// also keeps toml11's silent saturation of larger literals (to 2^63 - 1) out.
inline constexpr std::int64_t max_seed = std::int64_t{1} << 53;
inline constexpr IntegerRange drift_every{0, static_cast<int>(max_grid_points)};

}  // namespace plan_limits
}  // namespace dvfslab
