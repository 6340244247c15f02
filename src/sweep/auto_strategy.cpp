// auto: the default search, chosen by the benchmark (docs/search.md). Along a knob:
// a short line (up to 5 settings) is measured whole (golden-section would measure most of it anyway,
// and this assumes nothing of its shape); a longer one by golden-section with the
// descent verified along the whole line. Then the contenders race: every measured
// setting of the line too close to the best to call is measured again. Over several
// knobs: coordinate descents, then diagonal steps, to a local minimum of the grid.
#include "sweep/search_lines.hpp"
#include "sweep/search_replay.hpp"
#include "sweep/search_strategies.hpp"

namespace dvfslab::search_detail {
namespace {

// Golden-section with its final descent measures about five settings of a line of
// six or more: a line this short is measured whole for the same cost, assuming
// nothing of its shape. (With 7, search_bench's one-knob curves needed 7 probes at
// p90 instead of 6, for 1.7 points more of them within 1 % at 1 % noise.)
constexpr std::size_t short_line = 5;

class AutoStrategy final : public ReplayStrategy {
 public:
  using ReplayStrategy::ReplayStrategy;
  std::string name() const override { return "auto"; }

 protected:
  void search(CaseEvidence& evidence, const KnobGrid& grid) const override {
    const LineSearch first = [](CaseEvidence& e, const Line& line, std::size_t) {
      const std::size_t found =
          line.size() <= short_line ? measure_line(e, line) : golden_section(e, line, true);
      return race(e, line, found);
    };
    const LineSearch descent = [](CaseEvidence& e, const Line& line, std::size_t start) {
      return race(e, line, descend(e, line, start, 0, line.size() - 1));
    };
    coordinate_search(evidence, grid, first, descent, true);
  }
};

}  // namespace

std::unique_ptr<SearchStrategy> make_auto_strategy(const StrategyOptions& options) {
  return std::make_unique<AutoStrategy>(options);
}

}  // namespace dvfslab::search_detail
