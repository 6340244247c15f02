// The `model` search strategy (docs/model.md#search): the model-guided exploration
// (model_guided.hpp), then the measured contenders race as in every search
// (search_lines.hpp). Probes get one window each and are measured again only where a
// comparison needs it (search_evidence.hpp), like the other searches.
#include "sweep/model_guided.hpp"
#include "sweep/search_lines.hpp"
#include "sweep/search_replay.hpp"
#include "sweep/search_strategies.hpp"

namespace dvfslab::search_detail {
namespace {

class ModelStrategy final : public ReplayStrategy {
 public:
  using ReplayStrategy::ReplayStrategy;
  std::string name() const override { return "model"; }

 protected:
  void search(CaseEvidence& evidence, const KnobGrid& grid) const override {
    guide_.explore(evidence, grid);
    const std::vector<Setting>& settings = grid.settings();
    if (const auto best = evidence.best_among(settings)) race(evidence, settings, index_of(settings, *best));
  }

 private:
  ModelGuide guide_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_model_strategy(const StrategyOptions& options) {
  return std::make_unique<ModelStrategy>(options);
}

}  // namespace dvfslab::search_detail
