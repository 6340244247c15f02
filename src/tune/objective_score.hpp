#pragma once
// How the tuner scores one probe: the analysis's objectives applied to a window's
// figures, against the phase's default-setting window (the baseline).
#include <optional>

#include "dvfslab/analysis.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/tuner.hpp"

namespace dvfslab::tune {

// A window's figures as a strategy sees them (items: iterations when the job reports none).
PointOutcome to_outcome(const ScheduledPoint& point, const WindowFigures& figures);

// The objective's value (lower is better); absent when the probe violates the
// objective's constraint or lacks a figure.
std::optional<double> objective_score(const Objective& objective, const PointOutcome& probe,
                                      const PointOutcome& baseline);

}  // namespace dvfslab::tune
