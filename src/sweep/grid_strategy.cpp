// The plan's grid as a search strategy, and the registered setting orders.
#include <algorithm>
#include <array>
#include <random>

#include "dvfslab/strategy.hpp"

namespace dvfslab {
namespace {

// Fisher–Yates over std::mt19937_64, whose output the standard fixes, so a seed gives
// the same order with every compiler and library (std::shuffle's is unspecified).
void shuffle(std::vector<Setting>& settings, std::uint64_t seed, std::size_t case_index) {
  std::mt19937_64 generator(seed * 1'000'003 + case_index);
  for (std::size_t i = settings.size(); i > 1; --i) {
    const std::size_t j = generator() % i;
    std::swap(settings[i - 1], settings[j]);
  }
}

// Indexed by Order.
const std::array<SettingOrder, 2>& orders() {
  static const std::array<SettingOrder, 2> registered = {
      SettingOrder{"random", "a shuffle by the plan's seed, different for each case", shuffle},
      SettingOrder{"ascending", "lowest setting first",
                   [](std::vector<Setting>&, std::uint64_t, std::size_t) {}},
  };
  return registered;
}

class GridStrategy final : public SearchStrategy {
 public:
  std::string name() const override { return "grid"; }

  std::vector<ScheduledPoint> propose(const SearchSpace& space,
                                      std::span<const PointOutcome> measured) override {
    if (!measured.empty()) return {};
    return planned(space).points;
  }

  Schedule planned(const SearchSpace& space) const override {
    return make_schedule(space.cases, space.settings, space.policy, space.shard);
  }
};

}  // namespace

std::unique_ptr<SearchStrategy> make_grid_strategy() { return std::make_unique<GridStrategy>(); }

std::span<const SettingOrder> setting_orders() { return orders(); }

const SettingOrder& setting_order(Order order) { return orders().at(static_cast<std::size_t>(order)); }

std::optional<Order> parse_order(std::string_view name) {
  for (std::size_t i = 0; i < orders().size(); ++i) {
    if (orders()[i].name == name) return static_cast<Order>(i);
  }
  return std::nullopt;
}

}  // namespace dvfslab
