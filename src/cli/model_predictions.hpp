#pragma once
// The model's predictions beside measured rows, for `analyze --model` (docs/model.md).
// Kept apart from the analysis: predicted values never enter its tables or figures.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dvfslab/model.hpp"
#include "dvfslab/results.hpp"

namespace dvfslab::cli {

// One entry per distinct (GPU, workload key, setting) of `rows` that has a model:
// the measured means and the model's value with its interval.
nlohmann::json prediction_json(const std::vector<ResultRow>& rows, const std::vector<model::Model>& models);
// The same as a table, headed PREDICTED.
std::string format_predictions(const std::vector<ResultRow>& rows, const std::vector<model::Model>& models,
                               const std::string& model_file);

}  // namespace dvfslab::cli
