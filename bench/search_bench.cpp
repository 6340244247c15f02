// search_bench: every registered search strategy on every curve and surface of the
// published sweep tables, through the strategy seam (propose/outcome loop) against
// an in-process noisy twin of the table, as the runner would drive it. Prints per
// table and overall: probes (median, p90), GPU time against the exhaustive sweep and
// the floor below which no search that checks its answer could go (floor_windows),
// regret against the exhaustive optimum (median, p90) and the share within 1 %.
//
// The headline is leave-one-table-out (issue 27; search_tally.hpp): for every table in
// turn, the strategy for one knob is chosen on the other tables and scored on it.
//
// Usage: search_bench DATA_DIR [--smoke] [--loto] [--strategies NAME,NAME...] [--auto-variants]
//                     [--clock-map] [--failures] [--seed N]
//   DATA_DIR      a folder of sweep tables (data/published)
//   --smoke       only the first curve of each table, one noise level (a quick check)
//   --loto        only the headline: objective energy, 0 % and 1 % noise (with --smoke, 0 %)
//   --strategies  only these registered strategies (default: all)
//   --auto-variants  also `auto` with each of its chosen constants moved down and up
//                 (auto-short3, auto-short7, auto-coarse6, auto-coarse12) and with
//                 the fitted finish of long lines (auto-fitted, auto-guarded; under a
//                 flat clock map auto-smooth-descents, -guarded), and with the search
//                 evidence's constants halved and doubled
//                 (auto-prior-half/-double, auto-extra1/5, auto-resolution-half/-double),
//                 and scan stopping after 2 or 4 rises (scan-rises2, scan-rises4)
//   --failures    also list every run that ended more than 1 % above the optimum:
//                 the curve, the setting chosen, the optimum and the probes
//   --seed N      another draw of the noise (default 0): the spread of the figures
//                 over seeds is their sampling error
//
// Two sets of curves (published_curves.hpp): "published", the tables' own settings (5–10 per curve), and
// "dense", each published curve interpolated (monotone piecewise-cubic in time and
// power, on the knob) onto the GPU's real setting step: 15 MHz for core clocks,
// 5 W for power limits. The dense set is not measured data; it checks how the
// strategies scale with the tens of settings a real GPU has.
//
// The twin: each window of a setting gives the table's energy per unit of work and
// time per unit, each multiplied by (1 + σ·z) with z a seeded standard normal, σ the
// noise level. A proposed point gets the windows it asks for (a search's probe: one
// per proposal), or windows until the stop rule of `dvfslab search` and of a sweep is
// met: at least 2, at most 5, until the 95 % half-width of energy is within 1 %.
// Windows have a fixed length, so GPU time is counted in windows. The exhaustive
// sweep it is compared with is what a user would run instead: every setting of the
// curve (the default included) under that stop rule.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "auto_variants.hpp"
#include "bench_cli.hpp"
#include "curve_clock_maps.hpp"
#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/search.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/sweep_table.hpp"
#include "expected_line.hpp"
#include "published_curves.hpp"
#include "search_tally.hpp"

namespace {

using namespace dvfslab;
using bench::Curve;
using bench::dense_line_settings;
using bench::expected_line_span;
using bench::quantile_of;
using bench::Tally;
using bench::Truth;

// Standard normal draws from mt19937_64 (whose output the standard fixes) by
// Box–Muller, so a seed gives the same noise with every library.
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : generator_(seed) {}
  double normal() {
    const double u1 = (static_cast<double>(generator_() >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = static_cast<double>(generator_() >> 11) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

 private:
  std::mt19937_64 generator_;
};

PointSummary summary_of(const Setting& setting, const Truth& truth) {
  PointSummary point;
  point.setting = setting;
  point.repetitions = 1;
  point.energy_per_item_j.mean = truth.energy;
  point.energy_per_iteration_j.mean = truth.energy;
  point.time_per_iteration_s.mean = truth.time;
  point.edp_j_s.mean = truth.energy * truth.time;
  point.ed2p_j_s2.mean = truth.energy * truth.time * truth.time;
  point.mean_power_w.mean = truth.energy / truth.time;
  return point;
}

// The objective's true value of a setting of the curve (the default setting maps to
// the baseline row); infinity where it violates the constraint.
double true_value(const Curve& curve, const Objective& objective, const Setting& setting) {
  const Setting& row = setting.is_default() ? curve.baseline : setting;
  const auto value = objective_value(objective, summary_of(row, curve.points.at(row)),
                                     summary_of(curve.baseline, curve.points.at(curve.baseline)));
  return value ? *value : std::numeric_limits<double>::infinity();
}

// The neighbours of `setting` along each knob of the curve: the next lower and higher
// setting of the curve that equals it on every other knob.
std::vector<Setting> neighbours_of(const Curve& curve, const Setting& setting) {
  using Knob = std::optional<int> Setting::*;
  std::vector<Setting> neighbours;
  for (const Knob knob : {&Setting::sm_mhz, &Setting::mem_mhz, &Setting::power_limit_w}) {
    std::optional<Setting> below;
    std::optional<Setting> above;
    for (const auto& [other, truth] : curve.points) {
      Setting aligned = other;
      aligned.*knob = setting.*knob;
      if (aligned != setting || !(other.*knob) || !(setting.*knob) || other.*knob == setting.*knob) continue;
      if (*(other.*knob) < *(setting.*knob) && (!below || *(other.*knob) > *((*below).*knob))) below = other;
      if (*(other.*knob) > *(setting.*knob) && (!above || *(other.*knob) < *((*above).*knob))) above = other;
    }
    for (const auto& neighbour : {below, above}) {
      if (neighbour) neighbours.push_back(*neighbour);
    }
  }
  return neighbours;
}

// Windows of the least a search could measure that knew the optimum in advance and
// only checked it as `auto` does: the default under the stop rule (its windows in the
// exhaustive sweep), the optimum confirmed with the plan's repetitions, and one
// window of each of its neighbours along every knob. A floor for GPU time, not a
// strategy.
int floor_windows(const Curve& curve, const Setting& optimum, int default_windows, int repetitions) {
  int windows = default_windows;
  if (optimum != curve.baseline) windows += repetitions;
  for (const Setting& neighbour : neighbours_of(curve, optimum))
    windows += neighbour == curve.baseline ? 0 : 1;
  return windows;
}

// Each setting's expected energy on a published one-knob line of dense_line_settings
// or more (expected_line.hpp); empty for any other curve.
std::map<Setting, double> expected_energy_of(const Curve& curve) {
  std::map<Setting, double> expected;
  if (curve.set != "published" || curve.knobs != 1 || curve.points.size() < dense_line_settings)
    return expected;
  std::vector<double> readings;
  for (const auto& [setting, truth] : curve.points)
    readings.push_back(truth.energy);  // ordered along the knob
  const auto smoothed = bench::local_quadratic(readings, expected_line_span);
  std::size_t i = 0;
  for (const auto& [setting, truth] : curve.points) expected[setting] = smoothed[i++];
  return expected;
}

struct RunResult {
  int probes = 0;
  int windows = 0;
  int exhaustive_windows = 0;
  int floor_windows = 0;
  double regret_pct = 0;
  std::optional<Setting> chosen;
  Setting optimum;
  std::vector<Probe> probes_in_order;
  // On a line with an expected energy, objective energy: the choice against its least.
  std::optional<double> expected_regret_pct;
};

const Case bench_case{"curve", 1, Mode::train, Precision::fp32};

RunResult run(const Curve& curve, const std::map<Setting, double>& expected_energy,
              const std::string& strategy_name, const std::string& objective_text, double noise_level,
              std::uint64_t seed, const std::shared_ptr<const ClockMap>& clock_map) {
  StrategyOptions options;
  options.objective = parse_objective(objective_text);
  options.clock_map = clock_map;
  const auto strategy = make_strategy(strategy_name, options);
  SearchSpace space;
  space.cases = {bench_case};
  for (const auto& [setting, truth] : curve.points) {
    if (setting != curve.baseline) space.settings.push_back(setting);
  }
  // `dvfslab search`'s default stop rule (docs/search.md), which is also the
  // exhaustive sweep's.
  space.policy.repetitions = 2;
  space.policy.max_repetitions = 5;
  space.policy.ci_target_pct = 1.0;
  space.policy.drift_check = false;
  const StopRule stop_rule = make_stop_rule(space.policy);

  Noise noise(seed);
  // The exhaustive sweep: each setting's first visit, under the same stop rule (its
  // own noise stream, so the strategies' draws do not depend on it).
  RunResult result;
  Noise sweep_noise(~seed);
  int default_windows = 0;
  for (const auto& [setting, truth] : curve.points) {
    std::vector<double> values;
    do values.push_back(truth.energy * (1 + noise_level * sweep_noise.normal()));
    while (stop_rule.needs_another_repetition(values));
    result.exhaustive_windows += static_cast<int>(values.size());
    if (setting == curve.baseline) default_windows = static_cast<int>(values.size());
  }
  std::vector<PointOutcome> outcomes;
  std::map<Setting, std::vector<double>> series;
  std::map<Setting, std::vector<double>> throughputs;
  for (auto batch = strategy->propose(space, outcomes); !batch.empty();
       batch = strategy->propose(space, outcomes)) {
    for (const ScheduledPoint& point : batch) {
      const Setting& row = point.setting.is_default() ? curve.baseline : point.setting;
      const Truth& truth = curve.points.at(row);
      auto& values = series[point.setting];
      auto& throughput = throughputs[point.setting];
      PointOutcome outcome;
      outcome.point = point;
      do {
        const double energy = truth.energy * (1 + noise_level * noise.normal());
        const double time = truth.time * (1 + noise_level * noise.normal());
        values.push_back(energy);
        outcome.energy_per_item_j = energy;
        outcome.items_per_s = 1 / time;
        throughput.push_back(1 / time);
        outcome.mean_power_w = energy / time;
        ++outcome.repetitions;
        ++result.windows;
      } while (point.windows > 0 ? outcome.repetitions < point.windows
                                 : stop_rule.needs_another_repetition(values));
      outcome.energy_per_item_j_series = values;
      outcome.items_per_s_series = throughput;
      outcomes.push_back(outcome);
    }
    if (outcomes.size() > 10'000) throw Error("search_bench: " + strategy_name + " does not end");
  }
  result.probes = static_cast<int>(series.size());
  const Objective objective = parse_objective(objective_text);
  double optimum = std::numeric_limits<double>::infinity();
  for (const auto& [setting, truth] : curve.points) {
    if (const double value = true_value(curve, objective, setting); value < optimum) {
      optimum = value;
      result.optimum = setting;
    }
  }
  result.floor_windows = floor_windows(curve, result.optimum, default_windows, space.policy.repetitions);
  result.chosen = best_measured_setting(bench_case, outcomes, options);
  const double value =
      result.chosen ? true_value(curve, objective, *result.chosen) : std::numeric_limits<double>::infinity();
  result.regret_pct = 100.0 * (value / optimum - 1.0);
  result.probes_in_order = probes_in_order(outcomes);
  if (!expected_energy.empty() && objective_text == "energy" && result.chosen) {
    double least = std::numeric_limits<double>::infinity();
    for (const auto& [setting, energy] : expected_energy) least = std::min(least, energy);
    const Setting& row = result.chosen->is_default() ? curve.baseline : *result.chosen;
    result.expected_regret_pct = 100.0 * (expected_energy.at(row) / least - 1.0);
  }
  return result;
}

// ---------------------------------------------------------------- the table

std::string percent(double value) {
  if (!std::isfinite(value)) return "infeasible";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

void print_row(const std::string& scope, int knobs, const std::string& objective, double noise,
               const std::string& strategy, const Tally& tally) {
  std::printf("%-34s %d  %-27s %3.0f%%  %-13s %5zu  %5.1f %5.1f  %6.1f%% %6.1f%%  %10s %10s  %6.1f%%\n",
              scope.c_str(), knobs, objective.c_str(), 100 * noise, strategy.c_str(), tally.regret.size(),
              quantile_of(tally.probes, 0.5), quantile_of(tally.probes, 0.9),
              100.0 * tally.windows / tally.exhaustive_windows,
              100.0 * tally.floor_windows / tally.exhaustive_windows,
              percent(quantile_of(tally.regret, 0.5)).c_str(),
              percent(quantile_of(tally.regret, 0.9)).c_str(), tally.within_1_pct());
}

std::string failure_line(const Curve& curve, const std::string& objective, double noise,
                         const std::string& strategy, const RunResult& result) {
  std::string line = curve.set + " | " + curve.table + " | " + curve.workload + " | " + objective + " | " +
                     percent(100 * noise) + "% | " + strategy + " | regret " + percent(result.regret_pct) +
                     "% | chose " + (result.chosen ? to_string(*result.chosen) : "nothing") + " | optimum " +
                     to_string(result.optimum) + " | probes (windows):";
  for (const Probe& probe : result.probes_in_order)
    line.append(" ")
        .append(to_string(probe.setting))
        .append(" (")
        .append(std::to_string(probe.repetitions))
        .append(")");
  return line;
}

// Every tally: per set of curves, per table and overall.
void print_tables(const std::map<bench::TallyKey, Tally>& tallies) {
  std::string last_set;
  std::string last_scope;
  for (const std::string_view shown : {"published", "dense"}) {
    for (const auto& [key, tally] : tallies) {
      const auto& [set, scope, knobs, objective, noise, strategy] = key;
      if (set != shown) continue;
      if (set != last_set) {
        std::printf("\n== %s curves: %s\n\n", set.c_str(),
                    set == "dense"
                        ? "each published curve interpolated (monotone cubic in time and power) onto "
                          "15 MHz core-clock / 5 W power-limit steps; not measured data"
                        : "the tables' own settings");
        std::printf("%-34s %s  %-27s %4s  %-13s %5s  %5s %5s  %7s %7s  %10s %10s  %7s\n", "table", "k",
                    "objective", "noise", "strategy", "n", "p.med", "p.p90", "gpu", "floor", "regret.med",
                    "regret.p90", "in1%");
      } else if (scope != last_scope) {
        std::printf("\n");
      }
      last_set = set;
      last_scope = scope;
      print_row(scope, knobs, objective, noise, strategy, tally);
    }
  }
}

// One strategy at one noise level on the dense published lines: each run's regret
// against the table's least and against the expected line's least, and its probes.
struct DenseLineTally {
  std::vector<double> table_regret, expected_regret, probes;
};

void print_dense_lines(const std::map<std::pair<double, std::string>, DenseLineTally>& tallies) {
  if (tallies.empty()) return;
  std::printf(
      "\n== dense lines as published (one knob, %zu or more settings), objective energy: within 1 %% of the "
      "table's least and of the least of the line's expected energy (local quadratic over %zu settings on "
      "each side; a table that measured each setting once holds one draw per setting)\n\n%-5s %-13s %5s  "
      "%9s %12s  %5s %5s\n",
      dense_line_settings, expected_line_span, "noise", "strategy", "n", "in1% table", "in1% expected",
      "p.med", "p.p90");
  const auto within_1 = [](const std::vector<double>& regrets) {
    const auto within = std::count_if(regrets.begin(), regrets.end(), [](double r) { return r <= 1.0; });
    return 100.0 * static_cast<double>(within) /
           static_cast<double>(std::max<std::size_t>(regrets.size(), 1));
  };
  for (const auto& [key, tally] : tallies) {
    std::printf("%4.0f%% %-13s %5zu  %8.1f%% %11.1f%%  %5.1f %5.1f\n", 100 * key.first, key.second.c_str(),
                tally.table_regret.size(), within_1(tally.table_regret), within_1(tally.expected_regret),
                quantile_of(tally.probes, 0.5), quantile_of(tally.probes, 0.9));
  }
}

}  // namespace

constexpr const char* usage =
    "usage: search_bench DATA_DIR [--smoke] [--loto] [--strategies NAME,NAME...] [--auto-variants]\n"
    "                    [--clock-map] [--failures] [--seed N]\n"
    "  DATA_DIR      a folder of sweep tables, e.g. data/published\n"
    "  --smoke       only the first curve of each table, at 1 % noise (a quick check)\n"
    "  --loto        only the leave-one-table-out headline: objective energy, 0 % and 1 % noise\n"
    "  --strategies  only these registered strategies (default: all)\n"
    "  --auto-variants  also auto with one choice moved: auto-short3/7, auto-coarse6/12, auto-fitted,\n"
    "                auto-guarded, auto-smooth-descents/-guarded/-unraced (under a flat clock map),\n"
    "                auto-prior-half/-double, auto-extra1/5, auto-resolution-half/-double (the\n"
    "                evidence's constants halved and doubled), scan-rises2/4\n"
    "  --clock-map   give each long one-knob curve its GPU's clock map, learned from the other\n"
    "                curves of its table and set (leave-one-curve-out; auto uses it)\n"
    "  --failures    also list every run that ended more than 1 % above the optimum\n"
    "  --seed N      another draw of the noise (default 0), to see the figures' sampling error\n";

int main(int argc, char** argv) {
  if (const auto status = bench::usage_exit(argc, argv, usage, 1, argc)) return *status;
  bool smoke = false;
  bool loto_only = false;
  bool list_failures = false;
  bool auto_variants = false;
  bool with_clock_maps = false;
  std::uint64_t noise_seed = 0;
  std::set<std::string, std::less<>> only;  // strategies to run; empty: all
  bool usage_error = false;
  for (int i = 2; i < argc && !usage_error; ++i) {
    const std::string option = argv[i];
    if (option == "--smoke") {
      smoke = true;
    } else if (option == "--loto") {
      loto_only = true;
    } else if (option == "--failures") {
      list_failures = true;
    } else if (option == "--auto-variants") {
      auto_variants = true;
    } else if (option == "--clock-map") {
      with_clock_maps = true;
    } else if (option == "--seed" && i + 1 < argc) {
      const std::string text = argv[++i];
      char* end = nullptr;
      errno = 0;
      noise_seed = std::strtoull(text.c_str(), &end, 10);
      usage_error = text.empty() || text[0] == '-' || *end != '\0' || errno == ERANGE;
    } else if (option == "--strategies" && i + 1 < argc) {
      for (std::string_view list = argv[++i]; !list.empty();) {
        const auto comma = list.find(',');
        only.emplace(list.substr(0, comma));
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
      }
    } else {
      usage_error = true;
    }
  }
  if (usage_error) {
    std::fputs(usage, stderr);
    return 2;
  }
  try {
    if (auto_variants) bench::register_auto_variants();
    const std::vector<std::filesystem::path> tables = bench::sweep_tables_in(argv[1]);
    std::vector<std::string> loaded;
    std::vector<Curve> curves = bench::load_curves(tables, smoke, loaded);
    const std::size_t published_curves = curves.size();
    for (std::size_t c = 0; c < published_curves; ++c) curves.push_back(bench::densify(curves[c]));
    const auto clock_maps = with_clock_maps ? bench::leave_one_curve_out_maps(curves)
                                            : std::vector<std::shared_ptr<const ClockMap>>(curves.size());
    const std::vector<std::string> objectives =
        loto_only ? std::vector<std::string>{"energy"}
                  : std::vector<std::string>{"energy", "edp", "energy-within-slowdown:10%"};
    // The position in the list is part of a run's seed: --loto keeps the full run's.
    const std::vector<double> noise_levels = smoke       ? std::vector<double>{loto_only ? 0.0 : 0.01}
                                             : loto_only ? std::vector<double>{0.0, 0.01}
                                                         : std::vector<double>{0.0, 0.01, 0.02};
    std::vector<std::string> strategies;
    for (const StrategyDefinition& definition : search_strategies()) {
      if (only.empty() || only.count(definition.name)) strategies.emplace_back(definition.name);
    }
    if (strategies.empty()) throw ConfigError("--strategies names no registered strategy");

    std::map<bench::TallyKey, Tally> tallies;
    std::map<std::pair<double, std::string>, DenseLineTally> dense_lines;  // (noise, strategy)
    std::vector<std::string> failures;
    for (std::size_t c = 0; c < curves.size(); ++c) {
      const Curve& curve = curves[c];
      const std::map<Setting, double> expected_energy = expected_energy_of(curve);
      for (std::size_t o = 0; o < objectives.size(); ++o) {
        for (std::size_t n = 0; n < noise_levels.size(); ++n) {
          // The same noise for every strategy; a dense curve has its published curve's seed.
          const std::uint64_t seed = ((c % published_curves) * 31 + o) * 17 + n + 1 + noise_seed * 1'000'003;
          for (const std::string& strategy : strategies) {
            RunResult result;
            try {
              result =
                  run(curve, expected_energy, strategy, objectives[o], noise_levels[n], seed, clock_maps[c]);
            } catch (const Error& e) {
              std::printf("search_bench: skipped %s | %s | %s: %s\n", curve.table.c_str(),
                          curve.workload.c_str(), strategy.c_str(), e.what());
              continue;
            }
            for (const std::string& scope : {std::string("all"), curve.table})
              tallies[{curve.set, scope, curve.knobs, objectives[o], noise_levels[n], strategy}].add(
                  result.probes, result.regret_pct, result.windows, result.exhaustive_windows,
                  result.floor_windows);
            if (result.expected_regret_pct) {
              DenseLineTally& dense = dense_lines[{noise_levels[n], strategy}];
              dense.table_regret.push_back(result.regret_pct);
              dense.expected_regret.push_back(*result.expected_regret_pct);
              dense.probes.push_back(result.probes);
            }
            if (list_failures && result.regret_pct > 1.0)
              failures.push_back(failure_line(curve, objectives[o], noise_levels[n], strategy, result));
          }
        }
      }
    }
    std::printf(
        "search_bench: %zu curves of %zu tables in %s, and as many dense ones (below); probes = distinct "
        "settings measured (the default included); GPU time = windows against the exhaustive sweep's, "
        "which measures every setting under the sweep's stop rule (2 to 5 windows until the 95 %% half-width "
        "of energy is within 1 %%); floor = the windows a search would need that knew the "
        "optimum and only checked it (the default under the stop rule, the optimum with the plan's 2 "
        "repetitions, one window of each of its neighbours along every knob), against the same; regret in "
        "%% of the exhaustive optimum's objective value; noise seed %llu\n",
        published_curves, loaded.size(), argv[1], static_cast<unsigned long long>(noise_seed));
    bench::print_headline(tallies, loaded, noise_levels, strategies);
    print_dense_lines(dense_lines);
    if (!loto_only) print_tables(tallies);
    if (list_failures) {
      std::printf("\n== runs that ended more than 1 %% above the optimum (%zu)\n\n", failures.size());
      for (const std::string& line : failures) std::printf("%s\n", line.c_str());
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "search_bench: error: %s\n", e.what());
    return 1;
  }
}
