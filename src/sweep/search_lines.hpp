#pragma once
// The searches along one knob (a line of settings, ascending on it) and the
// coordinate search that combines them over several knobs. Each returns the index
// of the best setting it found, or throws ProbeNeeded / BudgetSpent through the
// evidence (search_evidence.hpp). docs/search.md states what each assumes.
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "sweep/search_evidence.hpp"

namespace dvfslab::search_detail {

using Line = std::vector<Setting>;
// A search along a line; `start` is the incumbent's index (line.size(): none on it).
using LineSearch = std::function<std::size_t(CaseEvidence&, const Line&, std::size_t start)>;

// Golden-section bracketing of a unimodal objective, then a descent to the best
// neighbour inside the final bracket, or along the whole line when `verify_whole_line`
// (which also escapes a bracket that noise or a non-unimodal curve misled).
std::size_t golden_section(CaseEvidence& evidence, const Line& line, bool verify_whole_line);

// From `start`, move to a better neighbour `step` settings away while there is one
// (a local minimum along the line at that step), within [low, high]; from an
// infeasible setting whose neighbours are infeasible too, upward.
std::size_t descend(CaseEvidence& evidence, const Line& line, std::size_t start, std::size_t low,
                    std::size_t high, std::size_t step = 1);

// Descents from `start` in steps of `first_step`, then half that, ... down to one:
// far steps first, so a flat stretch of the line does not stop it early.
std::size_t narrowing_descent(CaseEvidence& evidence, const Line& line, std::size_t start,
                              std::size_t first_step);

// The step between the settings of a coarse subset of `coarse_points` of a line of
// `size` settings (1 for a line no longer than that).
std::size_t coarse_step(std::size_t size, std::size_t coarse_points);

// From the top of the line downward until the objective rose `rises` times past the
// best so far (or was infeasible) without a new best in between.
std::size_t scan_down(CaseEvidence& evidence, const Line& line, int rises);

// Every setting of the line from the top down, each compared with the best so far.
std::size_t measure_line(CaseEvidence& evidence, const Line& line);

// The top, the bottom and the middle of the line, then a descent along the whole
// line from the best of them: no bracket to mislead where the curve drops at its
// low end after a plateau.
std::size_t ends_and_middle(CaseEvidence& evidence, const Line& line);

// The coarse subset of a long line after ends_and_middle searched it: the line's
// indices of its settings (ascending), the position among them of the best found,
// and the stride between them.
struct CoarsePass {
  std::vector<std::size_t> index;
  std::size_t best = 0;
  std::size_t stride = 1;
};
// ends_and_middle over every stride-th setting of a line longer than `coarse_points`
// (at most `coarse_points` of them, the bottom included).
CoarsePass coarse_pass(CaseEvidence& evidence, const Line& line, std::size_t coarse_points);

// On a line longer than `coarse_points`: ends_and_middle over every stride-th
// setting (at most `coarse_points` of them), then descents from its best in steps
// of half the stride, a quarter, ... down to one. Each step compares settings far
// enough apart to differ by more than the noise until the last few, where a wrong
// call costs little; a shorter line gets ends_and_middle alone.
std::size_t coarse_to_fine(CaseEvidence& evidence, const Line& line, std::size_t coarse_points);

// Compares every measured setting of the line with `best` (measuring again where
// they are too close to call) and returns the winner.
std::size_t race(CaseEvidence& evidence, const Line& line, std::size_t best);

// Knob by knob from `start` (the top setting when none): `first_pass` along each
// knob through the incumbent, then `later_passes` until a whole pass leaves the
// incumbent where it is.
Setting coordinate_search(CaseEvidence& evidence, const KnobGrid& grid, const LineSearch& first_pass,
                          const LineSearch& later_passes, const std::optional<Setting>& start = std::nullopt);

}  // namespace dvfslab::search_detail
