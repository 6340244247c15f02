#pragma once
// A long line searched with the GPU's clock map (dvfslab/clock_map.hpp; docs/search.md,
// "A GPU's clock map"): where the map says some settings cost less than their
// neighbours for every workload, comparing neighbours one at a time (the descents)
// is fooled by that scatter; the map predicts where the dips are instead.
#include <cstddef>
#include <optional>
#include <vector>

#include "dvfslab/clock_map.hpp"
#include "sweep/search_lines.hpp"

namespace dvfslab::search_detail {

// The map's factor of every setting of the line; none when it lacks one of them.
std::optional<std::vector<double>> line_factors(const ClockMap& map, const Line& line);
// Whether the factors vary by at least `resolution` beyond their `noise` (their
// relative standard deviation with the noise's variance taken out): a flatter map
// could not change which setting a search measures, and what a map learned from few
// noisy lines varies by its noise alone is no GPU's table.
bool varies_beyond(const std::vector<double>& factors, double noise, double resolution);

// Measures `spread` settings evenly spread over the line (both ends included, from
// the top down); their values divided by their factors give the line's trend (a
// local quadratic over the spread settings, evaluated at every setting); each
// setting's predicted value is its trend times its factor, and the `predicted` best
// predicted of the other settings are measured. Returns the index of the best
// measured setting of the line (the top when none is feasible).
std::size_t map_guided_line(CaseEvidence& evidence, const Line& line, const std::vector<double>& factor,
                            std::size_t spread, std::size_t predicted);

}  // namespace dvfslab::search_detail
