// coordinate: for several knobs (core × memory clock × power limit). A golden-section
// pass along each knob from the top setting, then descents to a better neighbour
// along each knob in turn until a whole pass moves nothing: a local minimum of the
// grid along every knob (search_lines.hpp).
#include "sweep/search_lines.hpp"
#include "sweep/search_replay.hpp"
#include "sweep/search_strategies.hpp"

namespace dvfslab::search_detail {
namespace {

class CoordinateStrategy final : public ReplayStrategy {
 public:
  using ReplayStrategy::ReplayStrategy;
  std::string name() const override { return "coordinate"; }

 protected:
  void search(CaseEvidence& evidence, const KnobGrid& grid) const override {
    const LineSearch golden = [](CaseEvidence& e, const Line& line, std::size_t) {
      return golden_section(e, line, true);
    };
    const LineSearch descent = [](CaseEvidence& e, const Line& line, std::size_t start) {
      return descend(e, line, start, 0, line.size() - 1);
    };
    coordinate_search(evidence, grid, golden, descent);
  }
};

}  // namespace

std::unique_ptr<SearchStrategy> make_coordinate_strategy(const StrategyOptions& options) {
  return std::make_unique<CoordinateStrategy>(options);
}

}  // namespace dvfslab::search_detail
