// The `model` search strategy on in-memory curves: every proposed point is
// "measured" from the curve and reported back, as the runner would.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "dvfslab/strategy.hpp"
#include "dvfslab/sweep_table.hpp"

namespace dvfslab {
namespace {

struct Truth {
  double time_s, power_w;
};
using Curve = std::map<Setting, Truth>;

struct SearchResult {
  std::vector<Setting> probes;  // distinct settings, in measuring order
  double chosen_energy = 0;     // the best measured
};

SearchResult search(const Curve& curve, const StrategyOptions& options = {}) {
  const Case workload_case{"w", 1, Mode::train, Precision::fp32};
  SearchSpace space;
  space.cases = {workload_case};
  for (const auto& [setting, truth] : curve) space.settings.push_back(setting);
  const auto strategy = make_strategy("model", options);
  std::vector<PointOutcome> outcomes;
  SearchResult result;
  result.chosen_energy = INFINITY;
  for (int round = 0; round < 100; ++round) {
    const auto next = strategy->propose(space, outcomes);
    if (next.empty()) return result;
    for (const auto& point : next) {
      const Truth truth = curve.at(point.setting);
      const double energy = truth.time_s * truth.power_w;
      PointOutcome o;
      o.point = point;
      o.repetitions = 1;
      o.energy_per_item_j = energy;
      o.energy_per_item_j_series = {energy};
      o.items_per_s = 1 / truth.time_s;
      o.mean_power_w = truth.power_w;
      outcomes.push_back(o);
      result.probes.push_back(point.setting);
      result.chosen_energy = std::min(result.chosen_energy, energy);
    }
  }
  ADD_FAILURE() << "the search did not stop in 100 rounds";
  return result;
}

double true_minimum(const Curve& curve) {
  double best = INFINITY;
  for (const auto& [setting, truth] : curve) best = std::min(best, truth.time_s * truth.power_w);
  return best;
}

Curve valley() {  // time 0.2 + 0.8/x, power 50 + 100·x + 400·x·(x − 0.6)⁺: optimum mid-range
  Curve curve;
  for (int mhz = 600; mhz <= 1500; mhz += 60) {
    const double x = mhz / 1500.0, h = std::max(0.0, x - 0.6);
    curve[Setting{mhz, 877, std::nullopt}] = {0.2 + 0.8 / x, 50 + 100 * x + 400 * x * h};
  }
  return curve;
}

TEST(ModelStrategy, FindsTheValleyOptimumInAFewProbesAndNeverRepeatsOne) {
  const Curve curve = valley();
  const auto result = search(curve);
  EXPECT_LE(result.chosen_energy, 1.01 * true_minimum(curve));
  EXPECT_LE(result.probes.size(), 8u);
  EXPECT_LT(result.probes.size(), curve.size());
  const std::set<Setting> distinct(result.probes.begin(), result.probes.end());
  EXPECT_EQ(distinct.size(), result.probes.size());
  EXPECT_EQ(result.probes.front(), curve.rbegin()->first);  // the top setting first
}

TEST(ModelStrategy, RespectsThePointBudget) {
  StrategyOptions options;
  options.budget_points = 3;
  const auto result = search(valley(), options);
  EXPECT_EQ(result.probes.size(), 3u);
}

TEST(ModelStrategy, EnergyWithinSlowdownStaysNearTheTopClock) {
  StrategyOptions options;
  options.objective = "energy-within-slowdown:5%";
  const Curve curve = valley();
  const auto result = search(curve, options);
  const double top_time = curve.rbegin()->second.time_s;
  // The constrained optimum is the lowest clock at most 5 % slower than the top.
  double best = INFINITY;
  for (const auto& [setting, truth] : curve)
    if (truth.time_s <= 1.05 * top_time) best = std::min(best, truth.time_s * truth.power_w);
  double chosen = INFINITY;
  for (const auto& s : result.probes)
    if (curve.at(s).time_s <= 1.05 * top_time)
      chosen = std::min(chosen, curve.at(s).time_s * curve.at(s).power_w);
  EXPECT_LE(chosen, 1.01 * best);
}

// On the 20 published V100 kernel curves (10 clocks each; time not smooth in the
// clock), the search reaches the optimum within 1 % on most of them in ≤ 8 probes.
TEST(ModelStrategy, PublishedV100KernelCurves) {
  std::map<std::string, Curve> curves;
  for (const auto& row : read_sweep_table(std::string(DVFSLAB_SHARED_DATA_DIR) + "/v100-kernels-core.csv"))
    curves[row.workload_case.workload][row.setting] = {row.time_per_iteration_s, row.mean_power_w};
  int within = 0;
  std::size_t most_probes = 0;
  for (const auto& [name, curve] : curves) {
    const auto result = search(curve);
    within += result.chosen_energy <= 1.01 * true_minimum(curve);
    most_probes = std::max(most_probes, result.probes.size());
  }
  EXPECT_EQ(curves.size(), 20u);
  EXPECT_GE(within, 17) << "of 20";
  EXPECT_LE(most_probes, 8u);
}

}  // namespace
}  // namespace dvfslab
