// scan: from the highest setting of each knob downward until the objective rose
// three times past the best so far (search_lines.hpp). Makes no unimodality
// assumption beyond "three rises in a row mean the valley is behind", at the cost
// of many probes on a shallow valley.
#include "sweep/search_lines.hpp"
#include "sweep/search_replay.hpp"
#include "sweep/search_strategies.hpp"

namespace dvfslab::search_detail {
namespace {

constexpr int rises_to_stop = 3;

class ScanStrategy final : public ReplayStrategy {
 public:
  using ReplayStrategy::ReplayStrategy;
  std::string name() const override { return "scan"; }

 protected:
  void search(CaseEvidence& evidence, const KnobGrid& grid) const override {
    const LineSearch scan = [](CaseEvidence& e, const Line& line, std::size_t) {
      return scan_down(e, line, rises_to_stop);
    };
    coordinate_search(evidence, grid, scan, scan);
  }
};

}  // namespace

std::unique_ptr<SearchStrategy> make_scan_strategy(const StrategyOptions& options) {
  return std::make_unique<ScanStrategy>(options);
}

}  // namespace dvfslab::search_detail
