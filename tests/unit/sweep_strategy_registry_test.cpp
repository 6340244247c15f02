// The named strategies: --strategy's only list.
#include <gtest/gtest.h>

#include <algorithm>

#include "dvfslab/error.hpp"
#include "dvfslab/search.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/tuner.hpp"

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

// A host's strategy: the library's golden-section search under another name, so
// that it finds what golden finds wherever the other tests meet it in the registry.
class HostGolden final : public SearchStrategy {
 public:
  explicit HostGolden(const StrategyOptions& options) : inner_(make_strategy("golden", options)) {}
  std::string name() const override { return "host-golden"; }
  std::vector<ScheduledPoint> propose(const SearchSpace& space, std::span<const PointOutcome> measured) override {
    return inner_->propose(space, measured);
  }

 private:
  std::unique_ptr<SearchStrategy> inner_;
};

void register_host_golden_once() {
  const auto strategies = search_strategies();
  if (std::none_of(strategies.begin(), strategies.end(),
                   [](const StrategyDefinition& strategy) { return strategy.name == "host-golden"; })) {
    register_strategy({"host-golden", "golden-section under a host's name",
                       [](const StrategyOptions& options) { return std::make_unique<HostGolden>(options); }});
  }
}

std::string registration_error(StrategyDefinition definition) {
  try {
    register_strategy(std::move(definition));
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

TEST(StrategyRegistry, AHostRegisteredStrategyIsKnownByNameAfterTheLibrarysOwn) {
  register_host_golden_once();
  EXPECT_EQ(search_strategies().back().name, "host-golden");
  EXPECT_EQ(make_strategy("host-golden", {})->name(), "host-golden");
  EXPECT_NE(strategy_help().find("host-golden (golden-section under a host's name)"), std::string::npos);
  VirtualClock clock;
  SearchSession session(make_strategy("host-golden", {}), {}, clock);
  EXPECT_EQ(session.name(), "host-golden");
}

TEST(StrategyRegistry, TheTunerNamesAHostRegisteredStrategy) {
  register_host_golden_once();
  TunerOptions options;
  options.strategy = "host-golden";
  EXPECT_NO_THROW(validate(options));
  options.strategy = "host-silver";
  EXPECT_THROW(validate(options), ConfigError);
}

TEST(StrategyRegistry, ADuplicateAnEmptyOrAMalformedNameOrNoFactoryIsRefusedWithTheReason) {
  const auto make = [](const StrategyOptions&) { return make_grid_strategy(); };
  const std::size_t before = search_strategies().size();
  EXPECT_EQ(registration_error({"golden", "again", make}),
            "cannot register strategy 'golden': a strategy of that name is registered already");
  EXPECT_EQ(registration_error({"", "nameless", make}),
            "cannot register strategy '': a strategy's name is letters, digits, '-' and '_', and not empty");
  EXPECT_NE(registration_error({"two words", "spaced", make}), "");
  EXPECT_NE(registration_error({"line\nbreak", "in a plan's first line", make}), "");
  EXPECT_EQ(registration_error({"no-factory", "nothing makes it", nullptr}),
            "cannot register strategy 'no-factory': it has no make function");
  EXPECT_EQ(search_strategies().size(), before) << "a refused strategy is not registered";
}

}  // namespace
}  // namespace dvfslab
