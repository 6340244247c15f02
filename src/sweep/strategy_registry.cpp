// The named search strategies: adding one is one line in the table below.
#include <fmt/format.h>

#include <array>

#include "dvfslab/error.hpp"
#include "dvfslab/strategy.hpp"
#include "sweep/search_strategies.hpp"

namespace dvfslab {
namespace {

std::unique_ptr<SearchStrategy> make_grid(const StrategyOptions&) { return make_grid_strategy(); }

using namespace search_detail;

const std::array<StrategyDefinition, 6> registered = {
    StrategyDefinition{"grid", "every setting of the plan's knobs (the exhaustive sweep)", make_grid},
    StrategyDefinition{"golden", "golden-section search along each knob, for a unimodal objective",
                       make_golden_strategy},
    StrategyDefinition{"scan", "from the highest setting down until the objective rose three times",
                       make_scan_strategy},
    StrategyDefinition{"coordinate", "golden-section, then neighbour descents, knob by knob (several knobs)",
                       make_coordinate_strategy},
    StrategyDefinition{
        "model",
        "4 spread settings, then the fitted model's optimum and its neighbours until no gain above noise",
        make_model_strategy},
    StrategyDefinition{"auto", "the best search by the benchmark (docs/search.md)", make_auto_strategy},
};

std::string names() {
  std::string list;
  for (const StrategyDefinition& strategy : registered)
    list += fmt::format("{}{}", list.empty() ? "" : ", ", strategy.name);
  return list;
}

}  // namespace

std::span<const StrategyDefinition> search_strategies() { return registered; }

std::unique_ptr<SearchStrategy> make_strategy(std::string_view name, const StrategyOptions& options) {
  for (const StrategyDefinition& strategy : registered) {
    if (strategy.name == name) return strategy.make(options);
  }
  throw ConfigError(fmt::format("unknown strategy '{}'; choose one of: {}", name, names()));
}

std::string strategy_help() {
  std::string help = "How to choose the settings to measure:";
  for (const StrategyDefinition& strategy : registered)
    help += fmt::format(" {} ({});", strategy.name, strategy.help);
  help.back() = '.';
  return help;
}

}  // namespace dvfslab
