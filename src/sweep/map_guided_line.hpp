#pragma once
// A long line searched with the GPU's clock map (dvfslab/clock_map.hpp; docs/search.md,
// "A GPU's clock map"): where the map says some settings cost less than their
// neighbours for every workload, comparing neighbours one at a time (the descents)
// is fooled by that scatter; the map predicts where the dips are instead.
#include <cstddef>
#include <vector>

#include "dvfslab/clock_map.hpp"
#include "sweep/search_lines.hpp"

namespace dvfslab::search_detail {

// Measures the spread settings, then the predicted ones (clock_map.hpp's planning).
// Returns the index of the best measured setting of the line (the top when none is
// feasible).
std::size_t map_guided_line(CaseEvidence& evidence, const Line& line, const std::vector<double>& factor,
                            std::size_t spread, std::size_t predicted);

}  // namespace dvfslab::search_detail
