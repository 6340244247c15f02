#pragma once
// The smooth trend of an evenly stepped line of values, estimated from its own noisy
// points: a local quadratic regression (tricube weights over `span` values on each
// side), which follows a knee and a valley without assuming a global form. The
// clock map (clock_map.hpp) divides a measured line by it, and the benchmarks score
// a choice on a real dense line against it (bench/expected_line.hpp).
#include <cstddef>
#include <optional>
#include <vector>

namespace dvfslab::search_detail {

// One smoothed value per value (a quadratic is reproduced exactly); a line of fewer
// than 3 values is returned as it is.
std::vector<double> local_quadratic(const std::vector<double>& values, std::size_t span);

// The same estimate at `x` from values at unevenly placed positions `at` (ascending),
// over the positions within `reach` of x; none where fewer than 3 are.
std::optional<double> local_quadratic_at(const std::vector<double>& at, const std::vector<double>& values,
                                         double x, double reach);

}  // namespace dvfslab::search_detail
