// The named search strategies: the library's own are rows of the table below, a
// host program's are added by register_strategy.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "dvfslab/error.hpp"
#include "dvfslab/strategy.hpp"
#include "sweep/search_strategies.hpp"

namespace dvfslab {
namespace {

std::unique_ptr<SearchStrategy> make_grid(const StrategyOptions&) { return make_grid_strategy(); }

using namespace search_detail;

std::vector<StrategyDefinition> built_in() {
  return {
      {"grid", "every setting of the plan's knobs (the exhaustive sweep)", make_grid},
      {"golden", "golden-section search along each knob, for a unimodal objective", make_golden_strategy},
      {"scan", "from the highest setting down until the objective rose three times",
       [](const StrategyOptions& options) { return make_scan_strategy(options); }},
      {"coordinate", "golden-section, then neighbour descents, knob by knob (several knobs)",
       make_coordinate_strategy},
      {"model",
       "4 spread settings, then the fitted model's optimum and its neighbours until no gain above noise",
       make_model_strategy},
      {"auto", "the best search by the benchmark (docs/search.md)",
       [](const StrategyOptions& options) { return make_auto_strategy(options); }},
  };
}

std::vector<StrategyDefinition>& registered() {
  static std::vector<StrategyDefinition> strategies = built_in();
  return strategies;
}

const StrategyDefinition* find(std::string_view name) {
  const auto& strategies = registered();
  const auto it = std::find_if(strategies.begin(), strategies.end(),
                               [&](const StrategyDefinition& strategy) { return strategy.name == name; });
  return it == strategies.end() ? nullptr : &*it;
}

// A name travels on the command line and as the first line of a stored plan text.
bool well_formed(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

std::string names() {
  std::string list;
  for (const StrategyDefinition& strategy : registered())
    list += fmt::format("{}{}", list.empty() ? "" : ", ", strategy.name);
  return list;
}

}  // namespace

void register_strategy(StrategyDefinition definition) {
  if (!well_formed(definition.name)) {
    throw ConfigError(fmt::format(
        "cannot register strategy '{}': a strategy's name is letters, digits, '-' and '_', and not empty",
        definition.name));
  }
  if (find(definition.name)) {
    throw ConfigError(fmt::format(
        "cannot register strategy '{}': a strategy of that name is registered already", definition.name));
  }
  if (!definition.make)
    throw ConfigError(fmt::format("cannot register strategy '{}': it has no make function", definition.name));
  registered().push_back(std::move(definition));
}

std::span<const StrategyDefinition> search_strategies() { return registered(); }

std::unique_ptr<SearchStrategy> make_strategy(std::string_view name, const StrategyOptions& options) {
  if (const StrategyDefinition* strategy = find(name)) return strategy->make(options);
  throw ConfigError(fmt::format("unknown strategy '{}'; choose one of: {}", name, names()));
}

std::string strategy_help() {
  std::string help = "How to choose the settings to measure:";
  for (const StrategyDefinition& strategy : registered())
    help += fmt::format(" {} ({});", strategy.name, strategy.help);
  help.back() = '.';
  return help;
}

}  // namespace dvfslab
