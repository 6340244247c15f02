#pragma once
// The adaptive strategies of the registry (strategy_registry.cpp); docs/search.md
// describes each.
#include <cstddef>
#include <memory>

#include "dvfslab/strategy.hpp"
#include "sweep/model_guided.hpp"
#include "sweep/search_evidence.hpp"

namespace dvfslab::search_detail {

std::unique_ptr<SearchStrategy> make_golden_strategy(const StrategyOptions& options);
// `rises_to_stop`: the rises in a row after which a line's scan stops (docs/search.md,
// "Fitted and tuned choices"; search_bench --auto-variants moves it).
std::unique_ptr<SearchStrategy> make_scan_strategy(const StrategyOptions& options, int rises_to_stop = 3);
std::unique_ptr<SearchStrategy> make_coordinate_strategy(const StrategyOptions& options);
std::unique_ptr<SearchStrategy> make_model_strategy(const StrategyOptions& options);

// The chosen constants of `auto` (docs/search.md, "Fitted and tuned choices"): the
// registry's `auto` uses these defaults; search_bench varies them to validate them
// leave-one-table-out.
struct AutoSettings {
  // A line of up to this many settings is measured whole: starting from its ends and
  // middle would measure most of it anyway. (With 7, search_bench's one-knob curves
  // needed 7 probes at p90 instead of 6.)
  std::size_t short_line = 5;
  // The coarse subset of a long line, where the ends, the middle and a descent take
  // about 5 probes (search_bench: p90 6 on the published curves of up to 8 settings).
  std::size_t coarse_points = 8;
  // How a line of at least `long_line` settings ends after its coarse pass: descents
  // in ever finer steps, or two fitted probes (fitted_finish.hpp), falling back to
  // the descents where the fit fails or is not trusted. fitted_unraced: the fit,
  // trusted within the noise, answers without the race that measures its vertex and
  // the line's other contenders again (search_bench's auto-smooth-unraced; fewer
  // windows, a little less often within 1 % at 1 % noise: docs/search.md).
  enum class LongLineFinish { descents, fitted, fitted_within_noise, fitted_unraced };
  LongLineFinish long_line_finish = LongLineFinish::descents;
  // Issue 27's long lines: a modern GPU's 100+ clocks, not the 5–10 of older tables.
  std::size_t long_line = 30;
  // With the GPU's clock map (StrategyOptions::clock_map) a long line is searched by
  // map_guided_line instead: the coarse subset's settings spread over it, then this
  // many of the best predicted. 3: issue 27's budget of 12 probes less the default
  // and the 8 spread; not fitted (docs/search.md, "A GPU's clock map"). The tuner's
  // online search takes the same (MapGuidedLineRules, dvfslab/clock_map.hpp).
  std::size_t map_predicted = MapGuidedLineRules{}.predicted;
  // How a long line of SM or memory clocks ends when the map covers it but shows it
  // smooth (its factors vary less than the evidence's resolution beyond their noise):
  // the fit finds a smooth valley in fewer probes than descents, and it is on rough
  // lines that it misses (docs/search.md, "A fitted finish"), which a map would show.
  // search_bench --clock-map --auto-variants, leave-one-table-out: fitted on every
  // fold (docs/search.md, "A GPU's clock map"). Power-limit lines keep
  // long_line_finish: on the simulated H200 the fit ended within 1 % of the least on
  // 7 of 14 of them, the descents on 13.
  LongLineFinish smooth_map_finish = LongLineFinish::fitted;
  // When a comparison is settled and how noisy a first window is taken to be.
  EvidenceSettings evidence;
  // How several knobs are explored before the descents.
  ModelGuideSettings model_guide;
  // Over several knobs, the first step of the descents from the explored best, in
  // settings of the line; 0: half the coarse subset's step along it (4 on a line of
  // 51 to 64 settings), so a model that is off by a few settings is stepped past.
  // search_bench: shorter is fewer probes and less often within 1 % (docs/search.md).
  std::size_t several_knobs_first_step = 0;
};
std::unique_ptr<SearchStrategy> make_auto_strategy(const StrategyOptions& options,
                                                   const AutoSettings& settings = {});

}  // namespace dvfslab::search_detail
