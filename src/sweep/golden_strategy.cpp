// golden: golden-section search along each knob (search_lines.hpp), noise-aware:
// two probes that tie within their confidence intervals are measured again, and a
// tie that remains narrows the bracket to the span between them.
#include "sweep/search_lines.hpp"
#include "sweep/search_replay.hpp"
#include "sweep/search_strategies.hpp"

namespace dvfslab::search_detail {
namespace {

class GoldenStrategy final : public ReplayStrategy {
 public:
  using ReplayStrategy::ReplayStrategy;
  std::string name() const override { return "golden"; }

 protected:
  void search(CaseEvidence& evidence, const KnobGrid& grid) const override {
    const LineSearch golden = [](CaseEvidence& e, const Line& line, std::size_t) {
      return golden_section(e, line, false);
    };
    coordinate_search(evidence, grid, golden, golden);
  }
};

}  // namespace

std::unique_ptr<SearchStrategy> make_golden_strategy(const StrategyOptions& options) {
  return std::make_unique<GoldenStrategy>(options);
}

}  // namespace dvfslab::search_detail
