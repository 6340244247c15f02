// The `model` search strategy on in-memory curves: every proposed point is
// "measured" from the curve and reported back, as the runner would: the windows a
// proposal asks for, or under the stop rule of `dvfslab search` (2 to 5 windows).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "dvfslab/strategy.hpp"
#include "dvfslab/sweep_table.hpp"

namespace dvfslab {
namespace {

struct Truth {
  double time_s, power_w;
};
using Curve = std::map<Setting, Truth>;

struct SearchResult {
  std::vector<Setting> probes;  // distinct settings, in measuring order (the default first)
  int proposals = 0;
  double chosen_energy = 0;  // the best measured
};

SearchResult search(const Curve& curve, const StrategyOptions& options = {}) {
  const Case workload_case{"w", 1, Mode::train, Precision::fp32};
  SearchSpace space;
  space.cases = {workload_case};
  for (const auto& [setting, truth] : curve) space.settings.push_back(setting);
  space.policy.repetitions = 2;
  space.policy.max_repetitions = 5;
  space.policy.ci_target_pct = 1.0;
  const StopRule stop_rule = make_stop_rule(space.policy);
  const auto strategy = make_strategy("model", options);
  std::vector<PointOutcome> outcomes;
  std::map<Setting, std::pair<std::vector<double>, std::vector<double>>> series;  // energy, throughput
  SearchResult result;
  result.chosen_energy = INFINITY;
  for (int round = 0; round < 100; ++round) {
    const auto next = strategy->propose(space, outcomes);
    if (next.empty()) return result;
    for (const auto& point : next) {
      // The default runs like the top setting.
      const Truth truth = curve.at(point.setting.is_default() ? curve.rbegin()->first : point.setting);
      const double energy = truth.time_s * truth.power_w;
      PointOutcome o;
      o.point = point;
      o.energy_per_item_j = energy;
      o.items_per_s = 1 / truth.time_s;
      o.mean_power_w = truth.power_w;
      auto& [energies, throughputs] = series[point.setting];
      do {
        energies.push_back(energy);
        throughputs.push_back(*o.items_per_s);
        ++o.repetitions;
      } while (point.windows > 0 ? o.repetitions < point.windows : stop_rule.needs_another_repetition(energies));
      o.energy_per_item_j_series = energies;
      o.items_per_s_series = throughputs;
      outcomes.push_back(o);
      ++result.proposals;
      if (std::find(result.probes.begin(), result.probes.end(), point.setting) == result.probes.end())
        result.probes.push_back(point.setting);
      if (!point.setting.is_default()) result.chosen_energy = std::min(result.chosen_energy, energy);
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

TEST(ModelStrategy, FindsTheValleyOptimumInAFewProbes) {
  const Curve curve = valley();
  const auto result = search(curve);
  EXPECT_LE(result.chosen_energy, 1.01 * true_minimum(curve));
  EXPECT_LE(result.probes.size(), 8u);
  EXPECT_LT(result.probes.size(), curve.size());
  ASSERT_GE(result.probes.size(), 2u);
  EXPECT_TRUE(result.probes[0].is_default()) << "the baseline first";
  EXPECT_EQ(result.probes[1], curve.rbegin()->first) << "then the top setting";
}

TEST(ModelStrategy, WithoutNoiseOnlyTheAnswerIsProposedAgain) {
  const auto result = search(valley());
  // The baseline is measured under the stop rule in one proposal; every other probe
  // gets one window, and the answer one more proposal for the plan's 2 repetitions.
  EXPECT_EQ(result.proposals, static_cast<int>(result.probes.size()) + 1);
}

TEST(ModelStrategy, RespectsThePointBudget) {
  StrategyOptions options;
  options.budget_points = 3;
  const auto result = search(valley(), options);
  EXPECT_EQ(result.probes.size(), 3u) << "the default and two settings";
}

TEST(ModelStrategy, EnergyWithinSlowdownStaysNearTheTopClock) {
  StrategyOptions options;
  options.objective = parse_objective("energy-within-slowdown:5%");
  const Curve curve = valley();
  const auto result = search(curve, options);
  const double top_time = curve.rbegin()->second.time_s;
  // The constrained optimum is the lowest clock at most 5 % slower than the top.
  double best = INFINITY;
  for (const auto& [setting, truth] : curve)
    if (truth.time_s <= 1.05 * top_time) best = std::min(best, truth.time_s * truth.power_w);
  double chosen = INFINITY;
  for (const auto& s : result.probes)
    if (!s.is_default() && curve.at(s).time_s <= 1.05 * top_time)
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
