// The adaptive search strategies (golden, scan, coordinate, auto) driven through the
// seam's propose/outcome loop against small in-memory curves, the way the runner
// drives them: each proposed point measured under the plan's stop rule, a point
// proposed again measured once more, stored points reused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "core_memory_surface.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/strategy.hpp"

namespace dvfslab {
namespace {

// The truth of one setting: energy per item and seconds per item.
struct Truth {
  double energy = 0;
  double time = 0;
};

const Case test_case{"curve", 1, Mode::train, Precision::fp32};

struct Search {
  std::vector<PointOutcome> outcomes;
  std::map<Setting, int> windows;  // per distinct setting measured
  std::optional<Setting> best;
  int probes() const { return static_cast<int>(windows.size()); }
  int total_windows() const {
    int total = 0;
    for (const auto& [setting, count] : windows) total += count;
    return total;
  }
};

// `time_noise(setting, k)` multiplies the time of the setting's k-th window.
using TimeNoise = std::function<double(const Setting&, int)>;

// Runs `strategy_name` over `settings` (the default setting is `truth(Setting{})`).
// `noise(window)` multiplies the energy of the window-th window measured in the run.
Search run_search(
    const std::string& strategy_name, const std::vector<Setting>& settings,
    const std::function<Truth(const Setting&)>& truth, StrategyOptions options = {},
    const std::function<double(int)>& noise = [](int) { return 1.0; },
    const std::map<Setting, std::vector<double>>& stored = {}, int repetitions = 1,
    const TimeNoise& time_noise = [](const Setting&, int) { return 1.0; }) {
  const auto strategy = make_strategy(strategy_name, options);
  SearchSpace space;
  space.cases = {test_case};
  space.settings = settings;
  space.policy.repetitions = repetitions;
  space.policy.max_repetitions = repetitions;
  const StopRule stop_rule = make_stop_rule(space.policy);
  Search search;
  std::map<Setting, std::vector<double>> series = stored;
  std::map<Setting, std::vector<double>> throughputs;  // this run's windows only, as the runner's
  std::set<Setting> proposed;
  int window = 0;
  for (auto batch = strategy->propose(space, search.outcomes); !batch.empty();
       batch = strategy->propose(space, search.outcomes)) {
    EXPECT_LT(search.outcomes.size(), 500u) << "the search does not end";
    if (search.outcomes.size() >= 500) break;
    for (const ScheduledPoint& point : batch) {
      PointOutcome outcome;
      outcome.point = point;
      auto& values = series[point.setting];
      const bool first = proposed.insert(point.setting).second;
      if (!(first && !values.empty() && !stop_rule.needs_another_repetition(values))) {
        const Truth t = truth(point.setting);
        auto& throughput = throughputs[point.setting];
        do {
          values.push_back(t.energy * noise(window++));
          throughput.push_back(1.0 /
                               (t.time * time_noise(point.setting, static_cast<int>(throughput.size()))));
          ++outcome.repetitions;
          ++search.windows[point.setting];
        } while (point.windows > 0 ? outcome.repetitions < point.windows
                                   : stop_rule.needs_another_repetition(values));
        outcome.items_per_s = throughput.back();
        outcome.mean_power_w = values.back() * throughput.back();
        outcome.energy_per_item_j = values.back();
      }
      outcome.energy_per_item_j_series = values;
      outcome.items_per_s_series = throughputs[point.setting];
      search.outcomes.push_back(outcome);
    }
  }
  search.best = best_measured_setting(test_case, search.outcomes, options);
  return search;
}

std::vector<Setting> sm_clocks(int count, int step = 30, int lowest = 600) {
  std::vector<Setting> settings;
  for (int i = 0; i < count; ++i) settings.push_back(Setting{lowest + step * i, std::nullopt, std::nullopt});
  return settings;
}

// A valley in energy over the SM clock with its floor at `floor_mhz`; time falls as
// the clock rises. The default setting runs like the top clock with 2 % more energy
// (a boost clock), so that it is never the optimum.
std::function<Truth(const Setting&)> valley(int floor_mhz, double curvature = 1e-6, int top_mhz = 1200) {
  return [=](const Setting& setting) {
    const double mhz = setting.sm_mhz.value_or(top_mhz);
    const double boost = setting.is_default() ? 1.02 : 1.0;
    return Truth{boost * (1.0 + curvature * (mhz - floor_mhz) * (mhz - floor_mhz)), 1000.0 / mhz};
  };
}

int sm_of(const std::optional<Setting>& setting) {
  return setting && setting->sm_mhz ? *setting->sm_mhz : -1;
}

const std::vector<std::string> adaptive = {"golden", "scan", "coordinate", "auto"};

TEST(SearchStrategies, EachFindsTheFloorOfAUnimodalValleyInFewerProbesThanTheGrid) {
  const auto settings = sm_clocks(21);  // 600..1200 MHz
  for (const std::string& name : adaptive) {
    const Search search = run_search(name, settings, valley(780, 1e-5));
    EXPECT_EQ(sm_of(search.best), 780) << name;
    EXPECT_LT(search.probes(), 21) << name;
  }
  EXPECT_LE(run_search("golden", settings, valley(780, 1e-5)).probes(), 10);
}

// A power-limit curve is flat above the GPU's draw: golden-section's first two probes
// met on that plateau with equal values, kept the bracket between them and ended on
// the plateau, far above the valley below it.
TEST(SearchStrategies, GoldenSectionOnAPlateauAtTheTopGoesDownToTheValley) {
  const auto settings = sm_clocks(41);  // 600..1800 MHz; the first probes at 1050 and 1350
  const auto plateau = [](const Setting& setting) {
    const double mhz = std::min(setting.sm_mhz.value_or(1800), 900);
    return Truth{1.0 + 1e-5 * (mhz - 720) * (mhz - 720), 1000.0 / mhz};
  };
  for (const std::string name : {"golden", "auto"}) {
    EXPECT_EQ(sm_of(run_search(name, settings, plateau).best), 720) << name;
  }
}

TEST(SearchStrategies, TheDefaultSettingIsMeasuredFirst) {
  for (const std::string& name : adaptive) {
    const Search search = run_search(name, sm_clocks(8), valley(700));
    ASSERT_FALSE(search.outcomes.empty()) << name;
    EXPECT_TRUE(search.outcomes.front().point.setting.is_default()) << name;
  }
}

TEST(SearchStrategies, AFlatValleyEndsWithinOnePercentOfItsFloor) {
  const auto settings = sm_clocks(21);
  const auto flat = valley(900, 1e-8);  // 0.1 % over the whole range
  for (const std::string& name : adaptive) {
    const Search search = run_search(name, settings, flat);
    ASSERT_TRUE(search.best) << name;
    EXPECT_LE(flat(*search.best).energy, 1.01 * flat(Setting{900, {}, {}}).energy) << name;
  }
}

TEST(SearchStrategies, OptimaOnEitherBoundaryAreFound) {
  const auto settings = sm_clocks(15);  // 600..1020 MHz
  for (const std::string& name : adaptive) {
    EXPECT_EQ(sm_of(run_search(name, settings, valley(600)).best), 600) << name << " lowest";
    EXPECT_EQ(sm_of(run_search(name, settings, valley(1020, 1e-6, 1020)).best), 1020) << name << " highest";
  }
}

// Alternating ±1.5 % on a valley whose neighbours differ by ~0.5 %: single windows
// mislead, repeated ones average out.
double alternating(int window) { return window % 2 == 0 ? 1.015 : 0.985; }

TEST(SearchStrategies, OverlappingProbesAreMeasuredAgainAndTheNoisyValleyIsFound) {
  const auto settings = sm_clocks(21);
  const auto curve = valley(840, 2e-6);
  const double floor = curve(Setting{840, {}, {}}).energy;
  for (const char* name : {"golden", "auto"}) {
    const Search search = run_search(name, settings, curve, {}, alternating);
    EXPECT_GT(search.total_windows(), search.probes()) << name << ": some probe was measured again";
    ASSERT_TRUE(search.best) << name;
    EXPECT_LE(curve(*search.best).energy, 1.01 * floor) << name;
  }
}

TEST(SearchStrategies, QuietMeasurementsAreMeasuredAgainLessThanNoisyOnes) {
  // The case's own repeats replace the assumed noise: once they show none, fewer
  // comparisons need another window.
  const auto curve = valley(780, 2e-6);
  const Search quiet = run_search("golden", sm_clocks(21), curve);
  const Search noisy = run_search("golden", sm_clocks(21), curve, {}, alternating);
  EXPECT_LT(quiet.total_windows() - quiet.probes(), noisy.total_windows() - noisy.probes());
}

TEST(SearchStrategies, ASlowdownLimitExcludesTooSlowSettingsAndTheOptimumIsTheBestFeasibleOne) {
  // Energy falls all the way down to 600 MHz, but 10 % over the default's time
  // (the top clock, 1200 MHz) allows nothing below 1091 MHz: the optimum is 1110.
  const auto settings = sm_clocks(21);
  const auto downhill = valley(300);
  StrategyOptions options;
  options.objective = parse_objective("energy-within-slowdown:10%");
  for (const std::string& name : adaptive) {
    const Search search = run_search(name, settings, downhill, options);
    EXPECT_EQ(sm_of(search.best), 1110) << name;
  }
}

TEST(SearchStrategies, AutoMeasuresAShortLineWholeSoASecondValleyIsNotMissed) {
  // Two valleys: a local one at 690 MHz and the deeper one at the lowest clock.
  // Golden-section's descent would stop in the local one.
  const std::map<int, double> energy = {{600, 0.95}, {630, 1.05}, {660, 1.10}, {690, 1.00}, {720, 1.02}};
  const auto curve = [&](const Setting& setting) {
    return Truth{setting.is_default() ? 1.2 : energy.at(*setting.sm_mhz), 1.0};
  };
  EXPECT_EQ(sm_of(run_search("auto", sm_clocks(5), curve).best), 600);
}

// A power-limit curve of a job that draws less than most limits: flat within the
// measurement's own bumps, then lower at the lowest limit. Golden-section's probes
// meet on the bumps and its descent stops on the plateau; auto starts a line of 6
// to 8 settings from its ends and middle.
TEST(SearchStrategies, AutoStartsAMediumLineFromItsEndsSoADropAtTheBottomIsFound) {
  const std::vector<double> energy = {0.88, 1.00, 1.01, 1.00, 1.01, 1.00, 1.01};
  const auto curve = [&](const Setting& setting) {
    const int index = setting.is_default() ? 6 : (*setting.sm_mhz - 600) / 30;
    return Truth{energy.at(static_cast<std::size_t>(index)), 1.0};
  };
  EXPECT_NE(sm_of(run_search("golden", sm_clocks(7), curve).best), 600);
  const Search search = run_search("auto", sm_clocks(7), curve);
  EXPECT_EQ(sm_of(search.best), 600);
  EXPECT_LE(search.probes(), 6);  // the default included
}

TEST(SearchStrategies, AutoNarrowsALongLineFromACoarseSubsetToTheFloor) {
  // 81 clocks, 600..1800 MHz in 15 MHz steps, as a GPU offers them.
  const auto settings = sm_clocks(81, 15);
  for (const int floor_mhz : {615, 1035, 1410, 1785}) {
    const Search search = run_search("auto", settings, valley(floor_mhz, 1e-6, 1800));
    EXPECT_EQ(sm_of(search.best), floor_mhz);
    EXPECT_LE(search.probes(), 15) << floor_mhz;
    // The coarse subset starts from both ends of the line.
    EXPECT_TRUE(search.windows.count(settings.front())) << floor_mhz;
    EXPECT_TRUE(search.windows.count(settings.back())) << floor_mhz;
  }
}

TEST(SearchStrategies, AutosAnswerGetsThePlansRepetitionsWhileTheOtherProbesKeepOneWindow) {
  // A steep valley, steeper above its floor than below, so that no two settings have
  // equal energy: every comparison is clear on one window, and only the answer is
  // measured again, up to the plan's 3 repetitions (as the baseline was).
  const auto lopsided = [](const Setting& setting) {
    const double above = setting.sm_mhz.value_or(1200) - 810.0;
    return Truth{1.0 + (above > 0 ? 2e-4 : 1e-4) * above * above, 1000.0 / setting.sm_mhz.value_or(1200)};
  };
  const Search search = run_search(
      "auto", sm_clocks(21), lopsided, {}, [](int) { return 1.0; }, {}, 3);
  ASSERT_EQ(sm_of(search.best), 810);
  EXPECT_EQ(search.windows.at(*search.best), 3);
  EXPECT_EQ(search.windows.at(Setting{}), 3);
  for (const auto& [setting, windows] : search.windows) {
    if (setting != *search.best && !setting.is_default()) {
      EXPECT_EQ(windows, 1) << to_string(setting);
    }
  }
}

TEST(SearchStrategies, ABracketEndingAmongInfeasibleSettingsClimbsToTheFeasibleOnes) {
  // Regression: golden-section ended inside a bracket of settings all too slow and
  // the descent did not leave it, so the search fell back to the default. A 1 %
  // slowdown allows only the top clock here.
  StrategyOptions options;
  options.objective = parse_objective("energy-within-slowdown:1%");
  for (const std::string& name : adaptive) {
    EXPECT_EQ(sm_of(run_search(name, sm_clocks(21), valley(300), options).best), 1200) << name;
  }
}

TEST(SearchStrategies, ScanStopsThreeRisesPastTheBest) {
  // Top 1200 down to the floor at 1050 (6 settings), then three rises: 9 settings
  // and the default.
  const Search search = run_search("scan", sm_clocks(21), valley(1050, 1e-4));
  EXPECT_EQ(sm_of(search.best), 1050);
  EXPECT_EQ(search.probes(), 10);
}

// Energy over SM × memory clock with its floor at (780, 5001) and an interaction
// between the knobs; time falls with both clocks.
std::vector<Setting> sm_by_mem() {
  std::vector<Setting> settings;
  for (int mem : {4001, 5001, 6001, 7001, 8001, 9001})
    for (int sm = 600; sm <= 1200; sm += 60) settings.push_back(Setting{sm, mem, std::nullopt});
  return settings;
}

Truth bowl(const Setting& setting) {
  const double sm = (setting.sm_mhz.value_or(1200) - 780) / 100.0;
  const double mem = (setting.mem_mhz.value_or(9001) - 5001) / 1000.0;
  return Truth{1.0 + 0.02 * sm * sm + 0.03 * mem * mem + 0.01 * sm * mem,
               1.0 / setting.sm_mhz.value_or(1200) + 1.0 / setting.mem_mhz.value_or(9001)};
}

TEST(SearchStrategies, SeveralKnobsAreSearchedOnTheirGridAndTheFloorIsFound) {
  const auto settings = sm_by_mem();  // 11 × 6
  for (const char* name : {"coordinate", "auto"}) {
    const Search search = run_search(name, settings, bowl);
    ASSERT_TRUE(search.best) << name;
    EXPECT_EQ(*search.best, (Setting{780, 5001, std::nullopt})) << name;
    EXPECT_LE(search.probes(), 24) << name << " of 67 settings";
  }
}

using testing::core_and_memory_grid;

Truth core_and_memory_truth(const Setting& setting) {
  const auto [time, power] = testing::core_and_memory_time_and_power(setting);
  return Truth{(setting.is_default() ? 1.02 : 1.0) * time * power, time};
}

TEST(SearchStrategies, AutoOnTwoKnobsFollowsTheModelToTheFloorWithoutACrossOfWholeLines) {
  // A search from the top along each knob measures a cross of whole lines (1 + 6 + 5
  // settings) before it can turn; the model points at the valley from 4 settings.
  const Search search = run_search("auto", core_and_memory_grid(), core_and_memory_truth);
  double floor = INFINITY;
  for (const Setting& setting : core_and_memory_grid())
    floor = std::min(floor, core_and_memory_truth(setting).energy);
  ASSERT_TRUE(search.best);
  EXPECT_LE(core_and_memory_truth(*search.best).energy, 1.01 * floor);
  EXPECT_LE(search.probes(), 10);
}

TEST(SearchStrategies, StoredPointsAreReusedWithoutMeasuringThemAgain) {
  const auto settings = sm_clocks(21);
  const auto curve = valley(780);
  std::map<Setting, std::vector<double>> stored;
  for (const Setting& setting : settings) stored[setting] = {curve(setting).energy};
  stored[Setting{}] = {curve(Setting{}).energy};
  const Search search = run_search(
      "golden", settings, curve, {}, [](int) { return 1.0; }, stored);
  EXPECT_EQ(sm_of(search.best), 780);
  // A setting's first proposal takes its stored window; only a repeat to settle a
  // comparison measures anything.
  std::set<Setting> seen;
  for (const PointOutcome& outcome : search.outcomes) {
    if (seen.insert(outcome.point.setting).second) {
      EXPECT_EQ(outcome.repetitions, 0) << to_string(outcome.point.setting);
    }
  }
  EXPECT_LT(search.total_windows(), run_search("golden", settings, curve).total_windows());
}

TEST(SearchStrategies, ABudgetOfPointsBoundsTheSettingsMeasuredAndTheBestSoFarIsTheResult) {
  StrategyOptions options;
  options.budget_points = 4;
  for (const std::string& name : adaptive) {
    const Search search = run_search(name, sm_clocks(21), valley(780), options);
    EXPECT_LE(search.probes(), 4) << name;
    EXPECT_TRUE(search.best) << name;
  }
}

TEST(SearchStrategies, ABudgetOfSecondsBoundsTheWindowsMeasured) {
  StrategyOptions options;
  options.budget_seconds = 30;  // settle 1 s + a 2 s window per setting: 10 settings at most
  const Search search = run_search("scan", sm_clocks(21), valley(600), options);
  const int seconds = 2 * search.total_windows() + search.probes();
  EXPECT_LE(seconds, 30);
  EXPECT_GE(seconds, 27);
}

// An objective with an argument at its registry example ("energy-within-slowdown:5%").
Objective registered_objective(const ObjectiveDefinition& definition) {
  return parse_objective(definition.example.empty() ? definition.name : definition.example);
}

// The setting with the least value of `objective` over every setting, by the truth.
Setting exhaustive_optimum(const std::vector<Setting>& settings,
                           const std::function<Truth(const Setting&)>& truth, const Objective& objective) {
  const auto summary = [&](const Setting& setting) {
    const Truth t = truth(setting);
    return per_item_summary(setting, {t.energy}, 1.0 / t.time, t.energy / t.time);
  };
  const PointSummary baseline = summary(Setting{});
  std::optional<std::pair<double, Setting>> best;
  for (const Setting& setting : settings) {
    const auto value = objective_value(objective, summary(setting), baseline);
    if (value && (!best || *value < best->first)) best = std::pair{*value, setting};
  }
  return best.value().second;
}

// Every objective the registry holds reaches the searches through StrategyOptions
// alone: a new row needs no change here or in any strategy.
TEST(SearchStrategies, AutoFindsTheExhaustiveOptimumOfEveryRegisteredObjective) {
  const auto settings = sm_clocks(21);
  // The default runs like the top clock, 1 % slower and with 2 % more energy.
  const auto truth = [](const Setting& setting) {
    Truth t = valley(780, 1e-5)(setting);
    if (setting.is_default()) t.time *= 1.01;
    return t;
  };
  std::set<int> optima;
  for (const ObjectiveDefinition& definition : objectives()) {
    StrategyOptions options;
    options.objective = registered_objective(definition);
    const Setting expected = exhaustive_optimum(settings, truth, options.objective);
    EXPECT_EQ(run_search("auto", settings, truth, options).best, expected) << definition.name;
    optima.insert(sm_of(expected));
  }
  EXPECT_GE(optima.size(), 3u) << "the objectives choose differently on this curve";
}

TEST(SearchStrategies, EdpPrefersAHigherClockThanEnergyAlone) {
  const auto settings = sm_clocks(21);
  StrategyOptions edp;
  edp.objective = parse_objective("edp");
  const int energy_optimum = sm_of(run_search("auto", settings, valley(780)).best);
  const int edp_optimum = sm_of(run_search("auto", settings, valley(780), edp).best);
  EXPECT_EQ(energy_optimum, 780);
  EXPECT_GT(edp_optimum, energy_optimum);
}

TEST(SearchStrategies, EdpWeighsEveryWindowsTimeAndMeasuresAgainWhereTimeIsNoisy) {
  // Equal energy; 630 MHz is 3 % faster than 600 and the best under EDP. Each
  // setting's windows alternate ±5 % in time, 630's starting slow and 600's fast, so
  // first windows alone would pick 600. The default's repetitions show the time noise.
  const std::vector<Setting> settings = {Setting{600, {}, {}}, Setting{630, {}, {}}, Setting{660, {}, {}}};
  const auto truth = [](const Setting& setting) {
    const int mhz = setting.sm_mhz.value_or(700);
    const double time = mhz == 630 ? 0.97 : mhz == 600 ? 1.0 : 1.2;
    return Truth{setting.is_default() ? 1.2 : 1.0, time};
  };
  const TimeNoise seesaw = [](const Setting& setting, int k) {
    const double sign = (k % 2 == 0) == (setting.sm_mhz == 630) ? 1.0 : -1.0;
    return 1.0 + 0.05 * sign;
  };
  StrategyOptions edp;
  edp.objective = parse_objective("edp");
  const auto quiet_energy = [](int) { return 1.0; };
  const Search search = run_search("auto", settings, truth, edp, quiet_energy, {}, 2, seesaw);
  EXPECT_EQ(sm_of(search.best), 630);
  EXPECT_GE(search.windows.at(Setting{600, {}, {}}), 2) << "the close contender is measured again";
}

}  // namespace
}  // namespace dvfslab
