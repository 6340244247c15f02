#pragma once
// How the tuner scores one probe: the analysis's objectives applied to a window's
// figures, against the phase's default-setting window (the baseline).
#include <optional>

#include "dvfslab/analysis.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/tuner.hpp"

namespace dvfslab::tune {

// A window's figures as a strategy sees them (items: iterations when the job reports
// none; a setting not applied as clock_mismatch, so that a search never ends on it).
PointOutcome to_outcome(const ScheduledPoint& point, const WindowFigures& figures);

// The objective's value (lower is better); absent when the probe violates the
// objective's constraint, lacks a figure or ran at clocks the GPU chose instead of
// its setting's (WindowFigures::setting_not_applied).
std::optional<double> objective_score(const Objective& objective, const PointOutcome& probe,
                                      const PointOutcome& baseline);

}  // namespace dvfslab::tune
