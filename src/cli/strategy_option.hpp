#pragma once
// The --strategy option of search, sweep and study: the registered strategies'
// names and help (dvfslab/strategy.hpp), checked as a command-line value.
#include <memory>
#include <string>

#include "dvfslab/strategy.hpp"

namespace dvfslab::cli {

// "auto" when it is registered, else "grid".
std::string default_strategy_name();
// Throws UsageError (exit 2) naming the registered strategies for an unknown name.
std::unique_ptr<SearchStrategy> strategy_from_option(const std::string& name, const StrategyOptions& options);

}  // namespace dvfslab::cli
