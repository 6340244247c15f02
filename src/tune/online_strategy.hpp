#pragma once
// The tuner's own search ("online"): few probes, because every probe of an online
// tuner costs the job energy.
#include <memory>

#include "dvfslab/strategy.hpp"

namespace dvfslab::tune {

// One knob at a time (SM clock, then memory clock, then power limit), a golden-
// section search over that knob's values with the others at the best found so far.
// Assumes each knob's objective is a valley (unimodal), as energy against clock is;
// settings outside the space score as unusable. The default setting (the baseline)
// must be among the outcomes before anything else is proposed, and is proposed first.
// The chosen constant of the online search (docs/tune.md, "Fitted and tuned
// choices"): the tuner uses the default; tune_bench --online-variants varies it to
// validate it leave-one-table-out.
struct OnlineSettings {
  // Within this share the lower of two settings compared counts as no worse, so the
  // search moves down: twice the 1 % window noise tune_bench is run with.
  double near_tie_fraction = 0.02;
};
std::unique_ptr<SearchStrategy> make_online_strategy(const StrategyOptions& options,
                                                     const OnlineSettings& settings = {});

}  // namespace dvfslab::tune
