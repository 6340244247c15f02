#pragma once
// The model-guided exploration of a grid (docs/model.md#search): settings spread over
// it, a fit of the time-and-power model, the predicted optimum while it promises a
// gain above the noise, and its neighbours along every knob. The `model` strategy
// ends it with a race; `auto` continues from it on several knobs.
#include <cstddef>
#include <optional>
#include <vector>

#include "dvfslab/model.hpp"
#include "sweep/search_evidence.hpp"

namespace dvfslab::search_detail {

// The exploration's two chosen constants (docs/search.md#choices), validated
// leave-one-table-out by search_bench --auto-variants.
struct ModelGuideSettings {
  // Settings measured before the first fit: the top one and the rest spread evenly
  // down, enough for the model's few parameters.
  std::size_t spread_probes = 4;
  // The least relative gain a prediction must promise before its setting is
  // measured: below the noise of one window a measurement could not confirm it.
  double least_gain = 0.005;
};

class ModelGuide {
 public:
  explicit ModelGuide(const ModelGuideSettings& settings = {}) : settings_(settings) {}
  // Measures (through `evidence`: ProbeNeeded, BudgetSpent) until the model predicts
  // nothing left to gain and its optimum's neighbours are measured.
  void explore(CaseEvidence& evidence, const KnobGrid& grid) const;

 private:
  // The fit of the first windows; the last one is kept, so the replays that follow a
  // re-measurement (same first windows) do not fit again.
  const model::Model& fitted(const CaseEvidence& evidence, const KnobGrid& grid) const;

  ModelGuideSettings settings_;
  mutable std::vector<model::Observation> last_points_;
  mutable std::optional<model::Model> last_fit_;
};

}  // namespace dvfslab::search_detail
