#pragma once
// The `model` search strategy (src/sweep/model_strategy.cpp; docs/model.md#search).
#include <memory>

#include "dvfslab/strategy.hpp"

namespace dvfslab {

std::unique_ptr<SearchStrategy> make_model_strategy(const StrategyOptions& options);

}  // namespace dvfslab
