#pragma once
// The objective's best point of a case, shared by the optimum and the profile
// comparison so that both break ties alike.
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "dvfslab/analysis.hpp"

namespace dvfslab::analysis_detail {

// The index of the point of `points` (in setting order) that `eligible` admits with
// the smallest objective value against `baseline`; ties go to the shorter time, then
// to the earlier setting. A setting the GPU did not apply is never admitted. Absent
// when no admitted point meets the objective.
std::optional<std::size_t> best_point(const std::vector<PointSummary>& points, const PointSummary& baseline,
                                      const Objective& objective,
                                      const std::function<bool(const PointSummary&)>& eligible);

}  // namespace dvfslab::analysis_detail
