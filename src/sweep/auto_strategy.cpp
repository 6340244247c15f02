// auto: the default search, chosen by the benchmark (docs/search.md): golden-section
// along each knob with the descent verified along the whole line, then coordinate
// descents over the other knobs.
#include "sweep/search_lines.hpp"
#include "sweep/search_replay.hpp"
#include "sweep/search_strategies.hpp"

namespace dvfslab::search_detail {
namespace {

class AutoStrategy final : public ReplayStrategy {
 public:
  using ReplayStrategy::ReplayStrategy;
  std::string name() const override { return "auto"; }

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

std::unique_ptr<SearchStrategy> make_auto_strategy(const StrategyOptions& options) {
  return std::make_unique<AutoStrategy>(options);
}

}  // namespace dvfslab::search_detail
