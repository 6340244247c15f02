#pragma once
// The model's predictions beside measured rows, for `analyze --model` (docs/model.md).
// Kept apart from the analysis: predicted values never enter its tables or figures.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dvfslab/analysis.hpp"
#include "dvfslab/model.hpp"
#include "dvfslab/report.hpp"
#include "dvfslab/results.hpp"

namespace dvfslab::cli {

// One entry per distinct (GPU, workload key, setting) of `rows` that has a model:
// the measured means and the model's value with its interval.
nlohmann::json prediction_json(const std::vector<ResultRow>& rows, const std::vector<model::Model>& models);
// The same as a table, headed PREDICTED.
std::string format_predictions(const std::vector<ResultRow>& rows, const std::vector<model::Model>& models,
                               const std::string& model_file);
// For `report --model`: the model's energy per item at every measured setting of each
// case it has a model of (matched as above, by GPU and sweep-table workload key).
std::map<std::pair<CaseKey, Setting>, PredictedEnergy> predicted_energy(
    const Analysis& analysis, const std::vector<model::Model>& models);

}  // namespace dvfslab::cli
