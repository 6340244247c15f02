#pragma once
// The end of a long line's coarse-to-fine search by fitting instead of descents
// (AutoSettings::long_line_finish; docs/search.md, "A fitted finish"): a smooth
// valley between two coarse settings is found in two probes, where descents
// compare neighbours one step at a time.
#include <cstddef>
#include <optional>
#include <vector>

#include "sweep/search_lines.hpp"

namespace dvfslab::search_detail {

// When the second fit is trusted.
enum class FitTrust {
  always,
  // Only when its readings scatter about it no more than the windows' noise allows
  // (chi-square of the residuals below its 95 % quantile): a line rougher than its
  // noise at this scale (a staircase, a GPU's per-clock table) is not fitted.
  within_noise,
};

// Around line[coarse.index[coarse.best]]: a quadratic through it and its two coarse
// neighbours, its vertex measured, then a least-squares quadratic through every
// measured setting between those neighbours, its vertex measured; returns the best
// measured setting between the neighbours. None (the caller descends instead) where
// the coarse best is at an end of the line, either fit is not convex or the second
// is not trusted.
std::optional<std::size_t> fitted_finish(CaseEvidence& evidence, const Line& line, const CoarsePass& coarse,
                                         FitTrust trust);

// The 95 % quantile of the chi-square distribution with `degrees_of_freedom` (≥ 1).
double chi_square_95(std::size_t degrees_of_freedom);

}  // namespace dvfslab::search_detail
