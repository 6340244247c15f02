// A GPU's clock map (dvfslab/clock_map.hpp): learned from other workloads' lines it
// recovers the per-clock factor they share, refuses what cannot give one, reads back
// what it writes, and `auto` given it ends on the dip of the GPU's table in fewer
// probes than its descents take.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "dvfslab/clock_map.hpp"
#include "dvfslab/error.hpp"
#include "noiseless_search.hpp"
#include "sweep/map_guided_line.hpp"
#include "sweep/search_strategies.hpp"
#include "tune/online_strategy.hpp"

namespace dvfslab {
namespace {

constexpr int line_settings = 100;

Setting clock(int i) { return Setting{600 + 10 * i, 877, std::nullopt}; }

// The GPU's own table: every clock up to 2 % dearer or cheaper than its neighbours,
// the same for every workload; clock 68 the cheapest by far.
double gpu_factor(int i) {
  static const std::vector<double> table = [] {
    std::mt19937_64 random(1);
    std::uniform_real_distribution<double> offset(-0.02, 0.02);
    std::vector<double> factors;
    for (int k = 0; k < line_settings; ++k) factors.push_back(1.0 + offset(random));
    factors[68] = 0.95;
    return factors;
  }();
  return table.at(static_cast<std::size_t>(i));
}

// A workload's smooth trend: a valley at `floor` (an index), steeper below it.
double trend(int i, double floor) {
  const double x = (i - floor) / line_settings;
  return 1.0 + 0.8 * x * x + (x < 0 ? 1.5 * x * x : 0.0);
}

MeasuredLine workload_line(double floor, std::mt19937_64& random, double noise) {
  std::normal_distribution<double> scatter(0.0, noise);
  MeasuredLine line;
  for (int i = 0; i < line_settings; ++i)
    line.emplace_back(clock(i), trend(i, floor) * gpu_factor(i) * (1 + scatter(random)));
  return line;
}

std::vector<MeasuredLine> workloads(int count, double noise) {
  std::mt19937_64 random(7);
  std::vector<MeasuredLine> lines;
  for (int w = 0; w < count; ++w) lines.push_back(workload_line(35.0 + 5.0 * w, random, noise));
  return lines;
}

TEST(ClockMap, OtherWorkloadsLinesGiveTheGpusPerClockFactor) {
  const ClockMap map = learn_clock_map("Test GPU", workloads(12, 0.005));
  EXPECT_EQ(map.gpu, "Test GPU");
  EXPECT_EQ(map.lines, 12u);
  ASSERT_EQ(map.factor.size(), static_cast<std::size_t>(line_settings));
  // Each factor is the GPU's, shrunk a little by the trend each line's own readings
  // pull towards: away from the ends (where a local trend extrapolates) the two agree
  // closely, and the dip is the map's least factor.
  double products = 0, learned_squares = 0, true_squares = 0;
  for (int i = 8; i < line_settings - 8; ++i) {
    const double learned = map.factor.at(clock(i)) - 1;
    const double truth = gpu_factor(i) - 1;
    products += learned * truth, learned_squares += learned * learned, true_squares += truth * truth;
  }
  EXPECT_GT(products / std::sqrt(learned_squares * true_squares), 0.8);
  for (const auto& [setting, factor] : map.factor) {
    if (setting != clock(68)) {
      EXPECT_LT(map.factor.at(clock(68)), factor - 0.01) << to_string(setting);
    }
  }
}

TEST(ClockMap, ShortLinesOrASingleLineTeachNothing) {
  std::vector<MeasuredLine> lines = workloads(3, 0.0);
  for (auto& line : lines) line.resize(clock_map_least_line - 1);
  EXPECT_THROW(learn_clock_map("Test GPU", lines), ConfigError);
  EXPECT_THROW(learn_clock_map("Test GPU", workloads(1, 0.0)), ConfigError);
  std::vector<MeasuredLine> bad = workloads(2, 0.0);
  bad[0][5].second = std::nan("");
  EXPECT_THROW(learn_clock_map("Test GPU", bad), ConfigError);
}

TEST(ClockMap, ReadsBackWhatItWritesAndRefusesWhatIsNotAMap) {
  const ClockMap map = learn_clock_map("Test GPU", workloads(3, 0.0));
  const ClockMap back = parse_clock_map(clock_map_json(map), "map.json");
  EXPECT_EQ(back.gpu, map.gpu);
  EXPECT_EQ(back.lines, map.lines);
  EXPECT_DOUBLE_EQ(back.factor_noise, map.factor_noise);
  ASSERT_EQ(back.factor.size(), map.factor.size());
  for (const auto& [setting, factor] : map.factor) EXPECT_DOUBLE_EQ(back.factor.at(setting), factor);

  const auto refused = [](const std::string& text) {
    try {
      parse_clock_map(text, "bad.json");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string head =
      R"({"format":"dvfslab-clock-map","version":1,"gpu":"G","lines":2,"factor_noise":0.001,"settings":)";
  EXPECT_NE(refused("not json").find("bad.json is not a clock map: not valid JSON"), std::string::npos);
  EXPECT_NE(refused(head + R"([{"sm_mhz":1e999,"mem_mhz":null,"power_limit_w":null,"factor":1}]})")
                .find("too large"),
            std::string::npos);
  EXPECT_NE(refused(head + R"([{"sm_mhz":900,"mem_mhz":null,"power_limit_w":null}]})").find("missing"),
            std::string::npos);
  EXPECT_NE(refused(head + R"([{"sm_mhz":"fast","mem_mhz":null,"power_limit_w":null,"factor":1}]})")
                .find("wrong type"),
            std::string::npos);
  EXPECT_NE(refused(R"({"format":"dvfslab-model"})").find("\"format\""), std::string::npos);
  EXPECT_NE(
      refused(head + R"([{"sm_mhz":900,"mem_mhz":null,"power_limit_w":null,"factor":7}]})").find("outside"),
      std::string::npos);
  EXPECT_NE(refused(head + R"([{"sm_mhz":900,"mem_mhz":null,"power_limit_w":null,"factor":1},)"
                           R"({"sm_mhz":900,"mem_mhz":null,"power_limit_w":null,"factor":1}]})")
                .find("twice"),
            std::string::npos);
  EXPECT_NE(
      refused(head + R"([{"sm_mhz":-5,"mem_mhz":null,"power_limit_w":null,"factor":1}]})").find("no GPU's"),
      std::string::npos);
  EXPECT_NE(refused(head + "[]}").find("holds no setting"), std::string::npos);
  std::string noisy = head;
  noisy.replace(noisy.find("0.001"), 5, "-0.01");
  EXPECT_NE(refused(noisy + "[]}").find("factor_noise"), std::string::npos);
}

TEST(ClockMap, RowsOfSeveralGpusNeedOneNamedAndSettingsNotAppliedAreLeftOut) {
  std::vector<ResultRow> rows;
  std::mt19937_64 random(3);
  for (const std::string gpu : {"GPU A", "GPU B"}) {
    for (int w = 0; w < 3; ++w) {
      for (const auto& [setting, energy] : workload_line(40.0 + 10 * w, random, 0.0)) {
        ResultRow row;
        row.gpu = gpu;
        row.workload_case.workload = std::string("w").append(std::to_string(w));
        row.setting = setting;
        row.energy_per_iteration_j = energy;
        rows.push_back(row);
      }
    }
  }
  EXPECT_THROW(learn_clock_map(rows, std::nullopt), ConfigError);
  try {
    learn_clock_map(rows, std::string("GPU C"));
    ADD_FAILURE() << "a GPU the rows lack was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("GPU A, GPU B"), std::string::npos) << e.what();
  }
  // One workload's clock 68 ran elsewhere on GPU A: its reading is not the GPU's.
  for (ResultRow& row : rows) {
    if (row.gpu == "GPU A" && row.workload_case.workload == "w0" && row.setting == clock(68)) {
      row.energy_per_iteration_j *= 3;
      row.flags.clock_mismatch = true;
    }
  }
  const ClockMap map = learn_clock_map(rows, std::string("GPU A"));
  EXPECT_EQ(map.lines, 3u);
  EXPECT_LT(map.factor.at(clock(68)), 0.97) << "the reading of another clock is not averaged in";
}

TEST(ClockMap, ASettingWithoutAKnobTakesTheOneMappedSettingThatAgrees) {
  ClockMap map;
  map.factor[Setting{900, 877, std::nullopt}] = 0.98;
  map.factor[Setting{915, 877, std::nullopt}] = 1.01;
  map.factor[Setting{915, 810, std::nullopt}] = 1.03;
  EXPECT_EQ(clock_map_factor(map, Setting{900, 877, std::nullopt}), 0.98);
  EXPECT_EQ(clock_map_factor(map, Setting{900, std::nullopt, std::nullopt}), 0.98);
  EXPECT_EQ(clock_map_factor(map, Setting{915, std::nullopt, std::nullopt}), std::nullopt) << "two agree";
  EXPECT_EQ(clock_map_factor(map, Setting{930, std::nullopt, std::nullopt}), std::nullopt);
}

// `auto` through the strategy seam on a noiseless line of a workload the map never
// saw: the line's least energy is the GPU's dip at clock 68.
struct Searched {
  std::optional<Setting> best;
  std::size_t probes = 0;
  std::map<Setting, int> windows;  // per setting measured
};

MeasuredLine unseen_workload() {
  std::mt19937_64 random(11);
  return workload_line(58.0, random, 0.0);
}

using StrategyMaker = std::function<std::unique_ptr<SearchStrategy>(const StrategyOptions&)>;
const StrategyMaker make_auto = [](const StrategyOptions& options) {
  return search_detail::make_auto_strategy(options);
};

Searched search_line(const std::shared_ptr<const ClockMap>& map, const MeasuredLine& line = unseen_workload(),
                     const StrategyMaker& make_strategy = make_auto) {
  const std::map<Setting, double> energy(line.begin(), line.end());
  StrategyOptions options;
  options.clock_map = map;
  const auto strategy = make_strategy(options);
  std::vector<Setting> settings;
  for (const auto& [setting, value] : line) settings.push_back(setting);
  // The default runs like the line's top setting.
  const auto searched = testing::search_noiseless(
      *strategy, Case{"line", 1, Mode::train, Precision::fp32}, settings, options,
      [&](const Setting& setting) { return setting.is_default() ? line.back().second : energy.at(setting); });
  return {searched.best, searched.windows.size(), searched.windows};
}

TEST(ClockMap, AutoWithTheMapEndsOnTheGpusDipInTwelveProbesFewerThanWithout) {
  const auto map = std::make_shared<const ClockMap>(learn_clock_map("Test GPU", workloads(8, 0.005)));
  const Searched guided = search_line(map);
  const Searched unguided = search_line(nullptr);
  ASSERT_TRUE(guided.best && unguided.best);
  EXPECT_EQ(*guided.best, clock(68));
  EXPECT_LE(guided.probes, 12u) << "the default, 8 spread settings and 3 predicted";
  EXPECT_LT(guided.probes, unguided.probes) << "the descents compare neighbours one step at a time";
}

// The tuner's online search given the map searches the line as auto does, the
// default's reading standing for the top clock's: the dip in 11 probes, where its
// golden section, led by neighbours, misses it.
TEST(ClockMap, TheTunersOnlineSearchWithTheMapEndsOnTheDipToo) {
  const auto map = std::make_shared<const ClockMap>(learn_clock_map("Test GPU", workloads(8, 0.005)));
  const StrategyMaker make_online = [](const StrategyOptions& options) {
    return tune::make_online_strategy(options);
  };
  // The tuner's candidates leave the memory clock as found; the map names it.
  MeasuredLine line = unseen_workload();
  for (auto& [setting, energy] : line) setting.mem_mhz.reset();
  const Searched guided = search_line(map, line, make_online);
  const Searched unguided = search_line(nullptr, line, make_online);
  ASSERT_TRUE(guided.best && unguided.best);
  EXPECT_EQ(guided.best->sm_mhz, clock(68).sm_mhz);
  EXPECT_EQ(guided.probes, 11u) << "the default (standing for the top clock), 7 more spread and 3 predicted";
  EXPECT_EQ(guided.windows.count(line.back().first), 0u) << "the top clock is not probed again";
  EXPECT_NE(unguided.best->sm_mhz, clock(68).sm_mhz);
}

// The tuner takes auto's numbers for a map-guided line, not numbers of its own.
TEST(ClockMap, TheMapGuidedLineRulesAreAutosDefaults) {
  const search_detail::AutoSettings auto_settings;
  const MapGuidedLineRules rules;
  EXPECT_EQ(rules.spread, auto_settings.coarse_points);
  EXPECT_EQ(rules.predicted, auto_settings.map_predicted);
  EXPECT_EQ(rules.resolution, auto_settings.evidence.resolution);
  EXPECT_EQ(clock_map_least_line, auto_settings.long_line);
}

// The spread settings lie evenly over the line from the top down, both ends included;
// the predicted ones are those the trend times the factor puts least, none spread.
TEST(ClockMap, TheSpreadAndPredictedSettingsOfAMapGuidedLine) {
  EXPECT_EQ(clock_map_spread_indices(15, 8), (std::vector<std::size_t>{14, 12, 10, 8, 6, 4, 2, 0}));
  EXPECT_EQ(clock_map_spread_indices(2, 8), (std::vector<std::size_t>{1, 0}));
  EXPECT_TRUE(clock_map_spread_indices(0, 8).empty());
  // A flat trend: the factors alone rank the settings not spread.
  std::vector<double> factors(15, 1.0);
  factors[5] = 0.90;
  factors[9] = 0.95;
  factors[4] = 0.80;  // spread: measured already, not predicted
  std::vector<std::pair<std::size_t, double>> spread;
  for (const std::size_t i : clock_map_spread_indices(15, 8)) spread.emplace_back(i, 2.0 * factors[i]);
  const auto predicted = clock_map_predicted_indices(spread, factors, 8, 2);
  EXPECT_EQ(predicted, (std::vector<std::size_t>{5, 9}));
}

// Two noisy lines of a GPU with no table of its own give a map that varies by their
// noise alone: it says nothing, and is taken as smooth.
TEST(ClockMap, AMapOfTwoNoisyLinesOfASmoothGpuVariesByItsNoiseAlone) {
  std::mt19937_64 random(5);
  std::normal_distribution<double> scatter(0.0, 0.01);
  std::vector<MeasuredLine> lines(2);
  for (int w = 0; w < 2; ++w) {
    for (int i = 0; i < line_settings; ++i)
      lines[static_cast<std::size_t>(w)].emplace_back(clock(i),
                                                      trend(i, 40.0 + 20 * w) * (1 + scatter(random)));
  }
  const ClockMap map = learn_clock_map("Smooth GPU", lines);
  search_detail::Line line;
  for (int i = 0; i < line_settings; ++i) line.push_back(clock(i));
  const auto factors = clock_map_line_factors(map, line);
  ASSERT_TRUE(factors);
  EXPECT_GT(map.factor_noise, 0.004) << "two lines of 1 % scatter";
  EXPECT_TRUE(clock_map_varies_beyond(*factors, 0.0, 0.005)) << "the factors do vary by the noise";
  EXPECT_FALSE(clock_map_varies_beyond(*factors, map.factor_noise, 0.005));
  // With the GPU's table in the lines, the same two lines say so.
  for (auto& measured : lines) {
    for (auto& [setting, energy] : measured) energy *= gpu_factor((*setting.sm_mhz - 600) / 10);
  }
  const ClockMap table = learn_clock_map("Test GPU", lines);
  EXPECT_TRUE(clock_map_varies_beyond(*clock_map_line_factors(table, line), table.factor_noise, 0.005));
}

// A GPU whose lines are smooth, its map flat: a valley at setting 58.
std::pair<MeasuredLine, std::shared_ptr<const ClockMap>> smooth_gpu() {
  MeasuredLine smooth;
  auto flat = std::make_shared<ClockMap>();
  flat->gpu = "Smooth GPU";
  flat->lines = 2;
  for (int i = 0; i < line_settings; ++i) {
    smooth.emplace_back(clock(i), trend(i, 58.0));
    flat->factor[clock(i)] = 1.0;
  }
  return {smooth, flat};
}

// A GPU whose map is flat (its lines smooth): `auto` ends a long line by fitting its
// valley instead of descending to it.
TEST(ClockMap, AFlatMapEndsASmoothLineByFittingInFewerProbes) {
  const auto [smooth, flat] = smooth_gpu();
  const Searched fitted = search_line(flat, smooth);
  const Searched descended = search_line(nullptr, smooth);
  ASSERT_TRUE(fitted.best && descended.best);
  EXPECT_EQ(*descended.best, clock(58));
  // The fit's vertex of a valley steeper on one side lies a setting or two off it,
  // where the energy is within 0.1 %.
  const int fitted_index = (*fitted.best->sm_mhz - *clock(0).sm_mhz) / 10;
  EXPECT_LT(trend(fitted_index, 58.0) / trend(58, 58.0) - 1, 0.001) << to_string(*fitted.best);
  EXPECT_LT(fitted.probes, descended.probes);
}

// The fitted finish without the race (search_bench's auto-smooth-unraced): the fit's
// answer stands where the raced finish measures its vertex and the best coarse setting
// again until their comparison settles.
TEST(ClockMap, AnUnracedFitTakesItsVertexWithoutMeasuringAgain) {
  const auto [smooth, flat] = smooth_gpu();
  const auto finish_by = [](search_detail::AutoSettings::LongLineFinish finish) -> StrategyMaker {
    return [finish](const StrategyOptions& options) {
      search_detail::AutoSettings settings;
      settings.smooth_map_finish = finish;
      return search_detail::make_auto_strategy(options, settings);
    };
  };
  const Searched raced =
      search_line(flat, smooth, finish_by(search_detail::AutoSettings::LongLineFinish::fitted));
  const Searched unraced =
      search_line(flat, smooth, finish_by(search_detail::AutoSettings::LongLineFinish::fitted_unraced));
  ASSERT_TRUE(raced.best && unraced.best);
  const auto total = [](const Searched& s) {
    int windows = 0;
    for (const auto& [setting, count] : s.windows) windows += count;
    return windows;
  };
  EXPECT_EQ(unraced.probes, raced.probes) << "the same settings measured";
  EXPECT_LT(total(unraced), total(raced)) << "the vertex and its rivals not measured again";
  EXPECT_EQ(unraced.windows.at(*unraced.best), 1);
  EXPECT_GT(raced.windows.at(*raced.best), 1);
  const int at = (*unraced.best->sm_mhz - *clock(0).sm_mhz) / 10;
  EXPECT_LT(trend(at, 58.0) / trend(58, 58.0) - 1, 0.001) << to_string(*unraced.best);
}

// A power-limit line is a plateau where the limit is above the draw: a flat map
// leaves it to the descents.
TEST(ClockMap, AFlatMapLeavesAPowerLimitLineToTheDescents) {
  MeasuredLine limits;
  auto flat = std::make_shared<ClockMap>();
  flat->lines = 2;
  for (int i = 0; i < 60; ++i) {
    const Setting setting{std::nullopt, std::nullopt, 200 + 5 * i};
    // Dearer under low limits, least at 125 (index 25), up to the plateau from 40 on.
    const double energy =
        i < 25 ? 1.0 + 0.5 * std::pow((25.0 - i) / 25.0, 2) : 1.0 + 0.02 * std::min(i - 25, 15) / 15.0;
    limits.emplace_back(setting, energy);
    flat->factor[setting] = 1.0;
  }
  const Searched with_map = search_line(flat, limits);
  const Searched without = search_line(nullptr, limits);
  ASSERT_TRUE(with_map.best && without.best);
  EXPECT_EQ(*with_map.best, *without.best);
  EXPECT_EQ(with_map.probes, without.probes);
}

TEST(ClockMap, AMapMissingASettingHasNoFactorsForTheLineAndAFlatOneDoesNotVary) {
  search_detail::Line line;
  ClockMap map;
  for (int i = 0; i < 40; ++i) {
    line.push_back(clock(i));
    map.factor[clock(i)] = 1.0 + (i % 2 == 0 ? 0.001 : -0.001);
  }
  const auto factors = clock_map_line_factors(map, line);
  ASSERT_TRUE(factors);
  EXPECT_FALSE(clock_map_varies_beyond(*factors, 0.0, 0.005)) << "0.1 % is below the resolution";
  map.factor[clock(7)] = 1.05;
  EXPECT_TRUE(clock_map_varies_beyond(*clock_map_line_factors(map, line), 0.0, 0.005));
  EXPECT_FALSE(clock_map_varies_beyond(*clock_map_line_factors(map, line), 0.01, 0.005))
      << "no more than a map's noise of 1 %";
  map.factor.erase(clock(8));
  EXPECT_FALSE(clock_map_line_factors(map, line));
}

}  // namespace
}  // namespace dvfslab
