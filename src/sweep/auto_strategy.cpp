// auto: the default search, chosen by the benchmark (docs/search.md). Along a knob:
// a short line (up to 5 settings) is measured whole (any search would measure most
// of it, and this assumes nothing of its shape); a longer one from its top, bottom
// and middle with descents from the best, on a coarse subset of the line first when
// it is long (coarse_to_fine). Then the contenders race: every measured setting of
// the line too close to the best to call is measured again. Over several knobs the
// model guides (model_guided.hpp): a few spread settings, the fitted model's optimum
// and its neighbours; then descents along every knob from the best of them to a
// local minimum of the grid.
#include "sweep/model_guided.hpp"
#include "sweep/search_lines.hpp"
#include "sweep/search_replay.hpp"
#include "sweep/search_strategies.hpp"

namespace dvfslab::search_detail {
namespace {

// A line of up to 5 settings is measured whole: starting from its ends and middle
// would measure most of it anyway. (With 7, search_bench's one-knob curves needed
// 7 probes at p90 instead of 6.)
constexpr std::size_t short_line = 5;
// The coarse subset of a long line: 8 settings, where the ends, the middle and a
// descent take about 5 probes (search_bench: p90 6 on the published curves of up
// to 8 settings).
constexpr std::size_t coarse_points = 8;

class AutoStrategy final : public ReplayStrategy {
 public:
  using ReplayStrategy::ReplayStrategy;
  std::string name() const override { return "auto"; }

 protected:
  void search(CaseEvidence& evidence, const KnobGrid& grid) const override {
    const LineSearch first = [](CaseEvidence& e, const Line& line, std::size_t) {
      const std::size_t found =
          line.size() <= short_line ? measure_line(e, line) : coarse_to_fine(e, line, coarse_points);
      return race(e, line, found);
    };
    if (grid.axes().size() >= 2) {
      // A line search per knob from the top would measure a cross of whole lines
      // before it could turn; the model points at the valley from a few settings.
      // From there a long line is descended in the coarse subset's steps first, then
      // finer ones, as coarse_to_fine does.
      const LineSearch descent = [](CaseEvidence& e, const Line& line, std::size_t start) {
        const std::size_t step = coarse_step(line.size(), coarse_points);
        return race(e, line, narrowing_descent(e, line, start, step / 2));
      };
      guide_.explore(evidence, grid);
      coordinate_search(evidence, grid, descent, descent, evidence.best_among(grid.settings()));
      return;
    }
    coordinate_search(evidence, grid, first, first);
  }

 private:
  ModelGuide guide_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_auto_strategy(const StrategyOptions& options) {
  return std::make_unique<AutoStrategy>(options);
}

}  // namespace dvfslab::search_detail
