#pragma once
// search_bench --auto-variants: `auto` with one of its chosen constants
// (search_detail::AutoSettings) moved, registered as strategies of their own so the
// leave-one-table-out rule chooses among them and the default (docs/search.md,
// "`auto`'s line-search constants").
#include <cstddef>
#include <string>
#include <utility>

#include "dvfslab/strategy.hpp"
#include "sweep/search_strategies.hpp"

namespace dvfslab::bench {

// Each constant moved down and up: auto-short3, auto-short7, auto-coarse6, auto-coarse12;
// the long lines' other finish, fitted: auto-fitted (always trusted), auto-guarded
// (trusted within the measured noise); a long line a clock map shows smooth ended by
// descents, the guarded fit, or the guarded fit without the race that measures its
// contenders again: auto-smooth-descents, auto-smooth-guarded, auto-smooth-unraced; and the evidence's
// constants halved and doubled: auto-prior-half, auto-prior-double (noise assumed before repeats),
// auto-extra1, auto-extra5 (windows beyond the plan's most), auto-resolution-half, auto-resolution-double (a
// difference not worth another window); the model-guided exploration of several knobs: auto-spread3,
// auto-spread8 (first probes before the fit), auto-gain-half, auto-gain-double (least predicted gain worth a
// probe), auto-step1, auto-step2, auto-step8 (the first step of its descents); and `scan`'s one constant, the
// rises in a row that stop it: scan-rises2, scan-rises4.
inline void register_auto_variants() {
  const auto variant = [](const std::string& name, const search_detail::AutoSettings& settings) {
    register_strategy({name, "auto with one choice moved (search_bench --auto-variants)",
                       [settings](const StrategyOptions& options) {
                         return search_detail::make_auto_strategy(options, settings);
                       }});
  };
  const search_detail::AutoSettings chosen;
  for (const std::size_t short_line : {chosen.short_line - 2, chosen.short_line + 2}) {
    search_detail::AutoSettings settings = chosen;
    settings.short_line = short_line;
    variant(std::string("auto-short").append(std::to_string(short_line)), settings);
  }
  for (const std::size_t coarse_points : {chosen.coarse_points - 2, chosen.coarse_points + 4}) {
    search_detail::AutoSettings settings = chosen;
    settings.coarse_points = coarse_points;
    variant(std::string("auto-coarse").append(std::to_string(coarse_points)), settings);
  }
  using Finish = search_detail::AutoSettings::LongLineFinish;
  for (const auto& [name, finish] :
       {std::pair{"auto-fitted", Finish::fitted}, std::pair{"auto-guarded", Finish::fitted_within_noise}}) {
    search_detail::AutoSettings settings = chosen;
    settings.long_line_finish = finish;
    variant(name, settings);
  }
  // A long line the GPU's clock map shows smooth ended by descents, by the guarded fit
  // or by the guarded fit unraced instead of the fit (search_bench --clock-map).
  for (const auto& [name, finish] : {std::pair{"auto-smooth-descents", Finish::descents},
                                     std::pair{"auto-smooth-guarded", Finish::fitted_within_noise},
                                     std::pair{"auto-smooth-unraced", Finish::fitted_unraced}}) {
    search_detail::AutoSettings settings = chosen;
    settings.smooth_map_finish = finish;
    variant(name, settings);
  }
  const auto evidence_variant = [&](const std::string& name, auto change) {
    search_detail::AutoSettings settings = chosen;
    change(settings.evidence);
    variant(name, settings);
  };
  using Evidence = search_detail::EvidenceSettings;
  evidence_variant("auto-prior-half", [](Evidence& e) { e.prior_relative_noise /= 2; });
  evidence_variant("auto-prior-double", [](Evidence& e) { e.prior_relative_noise *= 2; });
  evidence_variant("auto-extra1", [](Evidence& e) { e.extra_windows -= 2; });
  evidence_variant("auto-extra5", [](Evidence& e) { e.extra_windows += 2; });
  evidence_variant("auto-resolution-half", [](Evidence& e) { e.resolution /= 2; });
  evidence_variant("auto-resolution-double", [](Evidence& e) { e.resolution *= 2; });
  // The model-guided exploration of several knobs: its spread first probes, and the
  // least predicted gain worth a probe halved and doubled.
  for (const std::size_t spread : {std::size_t{3}, std::size_t{8}}) {
    search_detail::AutoSettings settings = chosen;
    settings.model_guide.spread_probes = spread;
    variant(std::string("auto-spread").append(std::to_string(spread)), settings);
  }
  for (const auto& [name, factor] : {std::pair{"auto-gain-half", 0.5}, std::pair{"auto-gain-double", 2.0}}) {
    search_detail::AutoSettings settings = chosen;
    settings.model_guide.least_gain *= factor;
    variant(name, settings);
  }
  // The descents over several knobs starting one setting apart, two, or eight
  // instead of half the coarse step.
  for (const std::size_t step : {std::size_t{1}, std::size_t{2}, std::size_t{8}}) {
    search_detail::AutoSettings settings = chosen;
    settings.several_knobs_first_step = step;
    variant(std::string("auto-step").append(std::to_string(step)), settings);
  }
  for (const int rises : {2, 4}) {
    register_strategy({std::string("scan-rises").append(std::to_string(rises)),
                       "scan with another number of rises to stop (search_bench --auto-variants)",
                       [rises](const StrategyOptions& options) {
                         return search_detail::make_scan_strategy(options, rises);
                       }});
  }
}

}  // namespace dvfslab::bench
