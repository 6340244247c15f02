// auto: the default search, chosen by the benchmark (docs/search.md). Along a knob:
// a short line (up to 5 settings) is measured whole (any search would measure most
// of it, and this assumes nothing of its shape); a longer one from its top, bottom
// and middle with descents from the best, on a coarse subset of the line first when
// it is long (coarse_to_fine). Then the contenders race: every measured setting of
// the line too close to the best to call is measured again. Over several knobs the
// model guides (model_guided.hpp): a few spread settings, the fitted model's optimum
// and its neighbours; then descents along every knob from the best of them to a
// local minimum of the grid. With the GPU's clock map, a long line of one knob is
// searched where the map predicts its dips (map_guided_line.hpp), or where the map
// shows the line smooth, ended by fitting (fitted_finish.hpp).
#include "sweep/fitted_finish.hpp"
#include "sweep/map_guided_line.hpp"
#include "sweep/model_guided.hpp"
#include "sweep/search_lines.hpp"
#include "sweep/search_replay.hpp"
#include "sweep/search_strategies.hpp"

namespace dvfslab::search_detail {
namespace {

// Whether the line runs along the power limit.
bool varies_power_limit(const Line& line) {
  return !line.empty() && line.front().power_limit_w != line.back().power_limit_w;
}

class AutoStrategy final : public ReplayStrategy {
 public:
  AutoStrategy(const StrategyOptions& options, const AutoSettings& settings)
      : ReplayStrategy(options, settings.evidence),
        settings_(settings),
        guide_(settings.model_guide),
        clock_map_(clock_map_guides(options.objective) ? options.clock_map : nullptr) {}
  std::string name() const override { return "auto"; }

 protected:
  void search(CaseEvidence& evidence, const KnobGrid& grid) const override {
    const AutoSettings settings = settings_;
    const std::shared_ptr<const ClockMap> clock_map = clock_map_;
    const LineSearch first = [settings, clock_map](CaseEvidence& e, const Line& line, std::size_t) {
      if (line.size() <= settings.short_line) return race(e, line, measure_line(e, line));
      AutoSettings::LongLineFinish finish = settings.long_line_finish;
      if (clock_map && line.size() >= settings.long_line) {
        if (const auto factors = clock_map_line_factors(*clock_map, line)) {
          if (clock_map_varies_beyond(*factors, clock_map->factor_noise, settings.evidence.resolution))
            return race(e, line,
                        map_guided_line(e, line, *factors, settings.coarse_points, settings.map_predicted));
          // The GPU's table leaves this line smooth: nothing for descents to trip on. A
          // power-limit line is left to them all the same: where the limit is above
          // the draw it is a plateau, which a quadratic does not follow.
          if (!varies_power_limit(line)) finish = settings.smooth_map_finish;
        }
      }
      if (finish == AutoSettings::LongLineFinish::descents || line.size() < settings.long_line ||
          line.size() <= settings.coarse_points)
        return race(e, line, coarse_to_fine(e, line, settings.coarse_points));
      const CoarsePass coarse = coarse_pass(e, line, settings.coarse_points);
      const FitTrust trust =
          finish == AutoSettings::LongLineFinish::fitted ? FitTrust::always : FitTrust::within_noise;
      const auto fitted = fitted_finish(e, line, coarse, trust);
      if (fitted && finish == AutoSettings::LongLineFinish::fitted_unraced) return *fitted;
      const std::size_t at = coarse.index[coarse.best];
      return race(e, line, fitted ? *fitted : narrowing_descent(e, line, at, coarse.stride / 2));
    };
    if (grid.axes().size() >= 2) {
      // A line search per knob from the top would measure a cross of whole lines
      // before it could turn; the model points at the valley from a few settings.
      // From there a long line is descended in the coarse subset's steps first, then
      // finer ones, as coarse_to_fine does.
      const LineSearch descent = [settings](CaseEvidence& e, const Line& line, std::size_t start) {
        const std::size_t first_step = settings.several_knobs_first_step > 0
                                           ? settings.several_knobs_first_step
                                           : coarse_step(line.size(), settings.coarse_points) / 2;
        return race(e, line, narrowing_descent(e, line, start, first_step));
      };
      guide_.explore(evidence, grid);
      coordinate_search(evidence, grid, descent, descent, evidence.best_among(grid.settings()));
      return;
    }
    coordinate_search(evidence, grid, first, first);
  }

 private:
  AutoSettings settings_;
  ModelGuide guide_;
  std::shared_ptr<const ClockMap> clock_map_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_auto_strategy(const StrategyOptions& options,
                                                   const AutoSettings& settings) {
  return std::make_unique<AutoStrategy>(options, settings);
}

}  // namespace dvfslab::search_detail
