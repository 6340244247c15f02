// The tuner's objective from its two options, as `dvfslab tune` and Python's Tuner take them.
#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "dvfslab/frontend.hpp"

namespace dvfslab::frontend {

Objective tuner_objective(const std::string& objective, std::optional<double> max_slowdown_pct,
                          const ObjectiveOptionNames& names) {
  if (!max_slowdown_pct) return parse_objective(objective);
  if (objective != "energy") {
    throw UsageError(fmt::format("{} sets the objective energy-within-slowdown; leave out {}",
                                 names.max_slowdown, names.objective));
  }
  if (!(*max_slowdown_pct >= 0 && *max_slowdown_pct <= 1000))
    throw UsageError(fmt::format("{} must be a percentage from 0 to 1000", names.max_slowdown));
  return parse_objective(fmt::format("energy-within-slowdown:{}%", *max_slowdown_pct));
}

}  // namespace dvfslab::frontend
