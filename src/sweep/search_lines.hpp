#pragma once
// The searches along one knob (a line of settings, ascending on it) and the
// coordinate search that combines them over several knobs. Each returns the index
// of the best setting it found, or throws ProbeNeeded / BudgetSpent through the
// evidence (search_evidence.hpp). docs/search.md states what each assumes.
#include <cstddef>
#include <functional>
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

// From `start`, move to a better neighbour while there is one (a local minimum along
// the line), within [low, high]; from an infeasible setting whose neighbours are
// infeasible too, upward.
std::size_t descend(CaseEvidence& evidence, const Line& line, std::size_t start, std::size_t low,
                    std::size_t high);

// From the top of the line downward until the objective rose `rises` times past the
// best so far (or was infeasible) without a new best in between.
std::size_t scan_down(CaseEvidence& evidence, const Line& line, int rises);

// Every setting of the line from the top down, each compared with the best so far.
std::size_t measure_line(CaseEvidence& evidence, const Line& line);

// Compares every measured setting of the line with `best` (measuring again where
// they are too close to call) and returns the winner.
std::size_t race(CaseEvidence& evidence, const Line& line, std::size_t best);

// Knob by knob from the top setting: `first_pass` along each knob through the
// incumbent, then `later_passes` until a whole pass leaves the incumbent where it is.
// With `diagonals`, a better diagonal neighbour (two knobs one step each) then moves
// the incumbent and the passes continue: a local minimum of the grid's 8-neighbourhood.
Setting coordinate_search(CaseEvidence& evidence, const KnobGrid& grid, const LineSearch& first_pass,
                          const LineSearch& later_passes, bool diagonals = false);

}  // namespace dvfslab::search_detail
