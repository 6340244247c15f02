// --strategy: only the registry knows the strategies, so nothing here lists them.
#include "cli/strategy_option.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "dvfslab/error.hpp"

namespace dvfslab::cli {
namespace {

bool registered(std::string_view name) {
  const auto strategies = search_strategies();
  return std::any_of(strategies.begin(), strategies.end(),
                     [&](const StrategyDefinition& strategy) { return strategy.name == name; });
}

}  // namespace

std::string default_strategy_name() { return registered("auto") ? "auto" : "grid"; }

std::unique_ptr<SearchStrategy> strategy_from_option(const std::string& name,
                                                     const StrategyOptions& options) {
  if (!registered(name)) {
    std::string names;
    for (const StrategyDefinition& strategy : search_strategies())
      names += fmt::format("{}{}", names.empty() ? "" : ", ", strategy.name);
    throw UsageError(fmt::format("--strategy '{}': unknown strategy; choose one of: {}", name, names));
  }
  return make_strategy(name, options);
}

}  // namespace dvfslab::cli
