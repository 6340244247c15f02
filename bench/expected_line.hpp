// The expected value of a measured line, estimated from its own noisy points, for
// the benchmarks that score a choice on a real dense line. A table that measured
// each setting once holds one draw per setting, so its least value is partly the
// luckiest draw; scoring against the line's expected value asks whether a choice
// is where the GPU really uses least. The estimate is a local quadratic regression
// (tricube weights over `span` settings on each side), which follows a knee and a
// valley without assuming a global form; bench/expected_curve.py is the same
// estimate for the Python benchmarks.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <vector>

namespace dvfslab::bench {

// The benchmarks score a line this long (issue 27's long lines) against its expected
// energy as well, smoothed over this many settings on each side (the span
// dense_replay_search.py --expected-span used first).
inline constexpr std::size_t dense_line_settings = 30;
inline constexpr std::size_t expected_line_span = 7;

// One smoothed value per value of an evenly stepped line (a quadratic reproduced
// exactly); a line of fewer than 3 values is returned as it is.
inline std::vector<double> local_quadratic(const std::vector<double>& values, std::size_t span) {
  const auto count = static_cast<std::ptrdiff_t>(values.size());
  if (count < 3) return values;
  const auto reach = static_cast<std::ptrdiff_t>(span);
  std::vector<double> smoothed(values.size());
  for (std::ptrdiff_t centre = 0; centre < count; ++centre) {
    const std::ptrdiff_t low = std::max<std::ptrdiff_t>(0, centre - reach);
    const std::ptrdiff_t high = std::min<std::ptrdiff_t>(count - 1, centre + reach);
    Eigen::MatrixXd design(high - low + 1, 3);
    Eigen::VectorXd observed(high - low + 1);
    for (std::ptrdiff_t i = low; i <= high; ++i) {
      const auto offset = static_cast<double>(i - centre);
      const double distance = std::abs(offset) / static_cast<double>(reach + 1);
      const double weight = std::sqrt(std::pow(1 - distance * distance * distance, 3));
      design.row(i - low) << weight, weight * offset, weight * offset * offset;
      observed(i - low) = weight * values[static_cast<std::size_t>(i)];
    }
    smoothed[static_cast<std::size_t>(centre)] = design.colPivHouseholderQr().solve(observed)(0);
  }
  return smoothed;
}

}  // namespace dvfslab::bench
