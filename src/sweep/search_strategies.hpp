#pragma once
// The adaptive strategies of the registry (strategy_registry.cpp); docs/search.md
// describes each.
#include <memory>

#include "dvfslab/strategy.hpp"

namespace dvfslab::search_detail {

std::unique_ptr<SearchStrategy> make_golden_strategy(const StrategyOptions& options);
std::unique_ptr<SearchStrategy> make_scan_strategy(const StrategyOptions& options);
std::unique_ptr<SearchStrategy> make_coordinate_strategy(const StrategyOptions& options);
std::unique_ptr<SearchStrategy> make_model_strategy(const StrategyOptions& options);
std::unique_ptr<SearchStrategy> make_auto_strategy(const StrategyOptions& options);

}  // namespace dvfslab::search_detail
