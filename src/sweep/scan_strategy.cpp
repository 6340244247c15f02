// scan: from the highest setting of each knob downward until the objective rose
// three times past the best so far (search_lines.hpp). Makes no unimodality
// assumption beyond "three rises in a row mean the valley is behind", at the cost
// of many probes on a shallow valley.
#include "sweep/search_lines.hpp"
#include "sweep/search_replay.hpp"
#include "sweep/search_strategies.hpp"

namespace dvfslab::search_detail {
namespace {

class ScanStrategy final : public ReplayStrategy {
 public:
  ScanStrategy(const StrategyOptions& options, int rises_to_stop)
      : ReplayStrategy(options), rises_to_stop_(rises_to_stop) {}
  std::string name() const override { return "scan"; }

 protected:
  void search(CaseEvidence& evidence, const KnobGrid& grid) const override {
    const int rises = rises_to_stop_;
    const LineSearch scan = [rises](CaseEvidence& e, const Line& line, std::size_t) {
      return scan_down(e, line, rises);
    };
    coordinate_search(evidence, grid, scan, scan);
  }

 private:
  int rises_to_stop_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_scan_strategy(const StrategyOptions& options, int rises_to_stop) {
  return std::make_unique<ScanStrategy>(options, rises_to_stop);
}

}  // namespace dvfslab::search_detail
