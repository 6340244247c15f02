// The named strategies: --strategy's only list.
#include <gtest/gtest.h>

#include "dvfslab/error.hpp"
#include "dvfslab/strategy.hpp"

namespace dvfslab {
namespace {

TEST(StrategyRegistry, GridIsRegisteredFirstAndMakesTheGridStrategy) {
  ASSERT_FALSE(search_strategies().empty());
  EXPECT_EQ(search_strategies().front().name, "grid");
  EXPECT_EQ(make_strategy("grid", {})->name(), "grid");
}

TEST(StrategyRegistry, EveryRegisteredNameMakesAStrategyOfThatName) {
  for (const StrategyDefinition& strategy : search_strategies())
    EXPECT_EQ(make_strategy(strategy.name, {})->name(), strategy.name);
}

TEST(StrategyRegistry, UnknownNameIsAConfigErrorListingTheChoices) {
  try {
    make_strategy("simulated-annealing", {});
    FAIL() << "an unknown strategy was accepted";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("grid"), std::string::npos) << error.what();
  }
}

TEST(StrategyRegistry, HelpNamesEveryStrategy) {
  const std::string help = strategy_help();
  for (const StrategyDefinition& strategy : search_strategies())
    EXPECT_NE(help.find(strategy.name), std::string::npos) << help;
}

}  // namespace
}  // namespace dvfslab
