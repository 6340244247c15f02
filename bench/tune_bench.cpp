// The online tuner against the oracle, the default and a Zeus-style policy on twins
// of every published curve (data/published): for each (GPU, workload) curve, an
// in-process twin answers a window of n iterations at a setting with the curve's
// time and energy per iteration, measured with 1 % noise (independent Gaussian
// errors, σ = 1 %, on each window's time and energy); the energy actually spent is
// the noiseless figure. A job is 20,000 iterations.
//
//   tuner  TuneController (online strategy, objective energy) — warm-up, probes, hold, watch;
//          among the settings `dvfslab tune` would choose from on the curve's GPU
//          (tune_candidates of the clocks and power limits the table lists: SM clocks
//          from 40 % of the top one, at most 24; 8 power limits, figures between two
//          measured limits interpolated linearly)
//   zeus   warm-up, then every setting of the curve from the top down for one window
//          each (the default first), then the least measured energy held
//   oracle the curve's least-energy setting from the first iteration
//
// The headline is leave-one-table-out (issue 27; loto.hpp): for every table in turn,
// the tuner's strategy is chosen on the other tables (the highest mean share of
// curves within 3 % of the oracle, ties to fewer probing iterations; "online", the
// default, kept against a lead that is not clear) among "online" and the registered
// search strategies, and scored on the table left out.
//
// Usage: tune_bench [DATA_DIR [STRATEGY]] [--smoke] [--online-variants] [--clock-map] [--seed N]
// (default data/published, the tuner's own strategy online; any registered strategy
// can be named; --smoke: the first curve of each table only; --online-variants: also
// the online search with its near-tie share halved and doubled, online-tie1 and
// online-tie4, as candidates of the headline; --clock-map: each dense line of SM
// clocks tuned as `dvfslab tune --clock-map` tunes it, with its GPU's clock map
// learned from the other lines of its table, leave-one-curve-out; --seed N: another
// draw of the noise). Output: docs/results/tune_bench.txt, tune_bench_clock_map.txt.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench_cli.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/sweep_table.hpp"
#include "dvfslab/tuner.hpp"
#include "loto.hpp"
#include "tune/online_strategy.hpp"
#include "tune_curves.hpp"

namespace {

using dvfslab::Setting;
using namespace dvfslab::bench::tune;
using dvfslab::bench::dense_line_settings;
using dvfslab::bench::expected_line_span;

constexpr std::int64_t job_iterations = 20'000;
constexpr std::int64_t warmup_iterations = 20;
constexpr std::int64_t window_iterations = 50;
constexpr double noise = 0.01;
// Another draw of the windows' noise (--seed; 0, the default, is the one the docs
// quote), mixed into each curve's seed, to see the figures' sampling error.
std::uint64_t noise_draw = 0;
constexpr std::uint64_t golden_gamma = 0x9E3779B97F4A7C15ULL;
class Twin {
 public:
  Twin(const Curve& curve, std::uint64_t seed) : curve_(curve), random_(seed ^ (noise_draw * golden_gamma)) {}
  // Runs n iterations at `s`: what the meter reports; the true energy is added to spent().
  dvfslab::WindowFigures run(const Setting& s, std::int64_t n) {
    const Figures& f = curve_.at(s);
    const double iterations = static_cast<double>(n);
    spent_ += iterations * f.energy_j;
    if (const auto expected = curve_.expected_energy_j.find(s); expected != curve_.expected_energy_j.end())
      expected_spent_ += iterations * expected->second;
    return dvfslab::WindowFigures{n, 0, iterations * f.time_s * (1 + noise * normal_(random_)),
                                  iterations * f.energy_j * (1 + noise * normal_(random_))};
  }
  double spent() const { return spent_; }
  // The same job on the line's expected energy (dense lines only).
  double expected_spent() const { return expected_spent_; }

 private:
  const Curve& curve_;
  std::mt19937_64 random_;
  std::normal_distribution<double> normal_{0.0, 1.0};
  double spent_ = 0;
  double expected_spent_ = 0;
};

struct Outcome {
  double energy_j = 0;
  std::int64_t probe_iterations = 0;
  double expected_energy_j = 0;  // on the expected line, dense lines only
};

Outcome run_tuner(const Curve& curve, const std::string& strategy, std::uint64_t seed) {
  dvfslab::TunerOptions options;
  options.warmup_iterations = warmup_iterations;
  options.probe_iterations = window_iterations;
  options.strategy = strategy;
  options.clock_map = curve.clock_map_for(strategy);
  dvfslab::TuneController controller(curve.candidates_for(strategy), options);
  Twin twin(curve, seed);
  std::int64_t done = 0;
  while (done < job_iterations) {
    const dvfslab::TuneWindow window = controller.next();
    const std::int64_t settle = std::min(window.settle_iterations, job_iterations - done);
    const dvfslab::WindowFigures settled =
        settle > 0 ? twin.run(window.setting, settle) : dvfslab::WindowFigures{};
    const std::int64_t n = std::min(window.iterations, job_iterations - done - settle);
    controller.complete(n > 0 ? twin.run(window.setting, n) : dvfslab::WindowFigures{}, settled);
    done += settle + n;
  }
  return Outcome{twin.spent(), controller.report().probe_iterations, twin.expected_spent()};
}

Outcome run_zeus(const Curve& curve, std::uint64_t seed) {
  std::vector<Setting> order;
  for (const auto& [s, f] : curve.points) order.push_back(s);
  std::sort(order.begin(), order.end(), dvfslab::setting_order_before);  // from the top down
  Twin twin(curve, seed);
  twin.run(Setting{}, warmup_iterations);
  std::int64_t done = warmup_iterations;
  Setting best;
  double best_energy = 0;
  std::int64_t probing = 0;
  for (const Setting& s : order) {
    const std::int64_t n = std::min(window_iterations, job_iterations - done);
    if (n <= 0) break;
    const auto measured = twin.run(s, n);
    const double per_iteration = measured.energy_j / static_cast<double>(n);
    if (probing == 0 || per_iteration < best_energy) {
      best = s;
      best_energy = per_iteration;
    }
    done += n;
    probing += n;
  }
  if (done < job_iterations) twin.run(best, job_iterations - done);
  return Outcome{twin.spent(), probing, twin.expected_spent()};
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double oracle_energy_of(const Curve& curve) {
  double oracle_energy = curve.points.begin()->second.energy_j;
  for (const auto& [s, f] : curve.points) oracle_energy = std::min(oracle_energy, f.energy_j);
  return oracle_energy * job_iterations;
}

// The job's energy held at the best of the tuner's candidates (or the default) from
// the first iteration: the most any strategy choosing among them can save.
double best_candidate_energy_of(const Curve& curve, const std::string& strategy) {
  double best = curve.points.at(Setting{}).energy_j;
  for (const Setting& s : curve.candidates_for(strategy)) best = std::min(best, curve.at(s).energy_j);
  return best * job_iterations;
}

double expected_oracle_energy_of(const Curve& curve) {
  double least = curve.expected_energy_j.begin()->second;
  for (const auto& [s, energy] : curve.expected_energy_j) least = std::min(least, energy);
  return least * job_iterations;
}

// What a job is scored against: the table's least energy, or on a dense line the
// least of its expected energy (on every other curve the table's least still).
enum class Reference { table_least, expected_on_dense_lines };

bool within_3_percent(const Curve& curve, const Outcome& outcome, Reference reference) {
  if (reference == Reference::expected_on_dense_lines && !curve.expected_energy_j.empty())
    return outcome.expected_energy_j <= expected_oracle_energy_of(curve) * 1.03;
  return outcome.energy_j <= oracle_energy_of(curve) * 1.03;
}

// Per table: how many curves the strategy ran, how many within 3 % of the oracle (by
// each reference), and the probing iterations it spent.
struct StrategyTotals {
  int curves = 0, within_3 = 0, within_3_expected = 0;
  double probe_iterations = 0;
  double within_pct(Reference reference) const {
    const int within = reference == Reference::table_least ? within_3 : within_3_expected;
    return curves > 0 ? 100.0 * within / curves : 0;
  }
};

using Totals = std::map<std::string, std::map<std::string, StrategyTotals>>;  // strategy → table → totals

void print_loto_row(const std::string& table, const std::string& chosen, const StrategyTotals& held_out,
                    const std::string& in_sample_choice, const StrategyTotals& in_sample,
                    Reference reference) {
  fmt::print("{:<36} {:>6}  {:<10} {:>7.1f} % {:>8.0f}   {:<10} {:>7.1f} % {:>8.0f}\n", table,
             held_out.curves, chosen, held_out.within_pct(reference),
             held_out.probe_iterations / std::max(held_out.curves, 1), in_sample_choice,
             in_sample.within_pct(reference), in_sample.probe_iterations / std::max(in_sample.curves, 1));
}

// The strategy chosen leave-one-table-out by `reference`, scored by it on each table left out.
void print_loto_by(const Totals& totals, const std::vector<std::string>& tables,
                   const std::vector<std::string>& candidates, Reference reference) {
  const auto totals_of = [&](const std::string& strategy, const std::string& table) {
    return totals.at(strategy).count(table) > 0 ? totals.at(strategy).at(table) : StrategyTotals{};
  };
  const auto score = [&](const std::string& strategy, const std::string& table) {
    const StrategyTotals t = totals_of(strategy, table);
    return dvfslab::bench::TableScore{t.within_pct(reference), t.probe_iterations / std::max(t.curves, 1),
                                      t.curves > 0};
  };
  const auto choices = dvfslab::bench::leave_one_table_out(tables, candidates, score);
  const bool expected = reference == Reference::expected_on_dense_lines;
  fmt::print(
      "\n== leave-one-table-out{}: the tuner's strategy chosen on the other tables (candidates: {}; the "
      "highest mean share of curves within 3 % of the oracle, ties to fewer probing iterations, online kept "
      "unless that lead is clear: over 2 sd/√n of the n tables' differences), scored on "
      "the table left out; in-sample: chosen on all tables{}\n\n",
      expected ? ", the dense lines against their expected line" : "", fmt::join(candidates, " "),
      expected ? fmt::format("; on the dense lines (one knob, {} or more settings) the oracle is the least "
                             "of the line's expected energy (local quadratic over {} settings on each side), "
                             "and the job is costed on it",
                             dense_line_settings, expected_line_span)
               : "");
  fmt::print("{:<36} {:>6}  {:<10} {:>9} {:>8}   {:<10} {:>9} {:>8}\n", "held-out table", "curves", "loto",
             "≤3%", "pi", "in-sample", "≤3%", "pi");
  StrategyTotals all_held_out, all_in_sample;
  std::string worst_table;
  double worst = 101;
  for (const std::string& table : tables) {
    const StrategyTotals held_out = totals_of(choices.held_out.at(table), table);
    const StrategyTotals in_sample = totals_of(choices.in_sample, table);
    print_loto_row(table, choices.held_out.at(table), held_out, choices.in_sample, in_sample, reference);
    for (auto [all, one] : {std::pair{&all_held_out, &held_out}, std::pair{&all_in_sample, &in_sample}}) {
      all->curves += one->curves, all->within_3 += one->within_3,
          all->within_3_expected += one->within_3_expected, all->probe_iterations += one->probe_iterations;
    }
    if (held_out.curves > 0 && held_out.within_pct(reference) < worst) {
      worst = held_out.within_pct(reference);
      worst_table = table;
    }
  }
  print_loto_row("all (pooled over curves)", "-", all_held_out, choices.in_sample, all_in_sample, reference);
  fmt::print("\nwithin 3 % of the oracle by candidate (what the choice was made from):\n{:<36}", "table");
  for (const std::string& candidate : candidates) fmt::print(" {:>10}", candidate);
  for (const std::string& table : tables) {
    fmt::print("\n{:<36}", table);
    for (const std::string& candidate : candidates)
      fmt::print(" {:>8.1f} %", totals_of(candidate, table).within_pct(reference));
  }
  fmt::print("\n\n");
  fmt::print(
      "target  leave-one-table-out within 3 % of the oracle on >= 95 % of curves: {:.1f} % {}\n"
      "target  no table (family) below 85 %: worst {} {:.1f} % {}\n",
      all_held_out.within_pct(reference), all_held_out.within_pct(reference) >= 95 ? "MET" : "NOT MET",
      worst_table, worst, worst >= 85 ? "MET" : "NOT MET");
}

// The headline: the tuner's strategy chosen leave-one-table-out, each curve with the
// seed it has in the detailed run below; then the same with the dense lines scored
// against their expected line.
void print_loto(const std::vector<Curve>& curves) {
  std::vector<std::string> candidates{"online"};
  for (const auto& definition : dvfslab::search_strategies()) candidates.emplace_back(definition.name);
  Totals totals;
  std::vector<std::string> tables;
  for (const Curve& curve : curves) {
    if (tables.empty() || tables.back() != curve.file) tables.push_back(curve.file);
  }
  for (const std::string& strategy : candidates) {
    std::uint64_t seed = 1;
    for (const Curve& curve : curves) {
      const std::uint64_t curve_seed = seed++;
      try {
        const Outcome outcome = run_tuner(curve, strategy, curve_seed);
        StrategyTotals& t = totals[strategy][curve.file];
        ++t.curves;
        t.within_3 += within_3_percent(curve, outcome, Reference::table_least) ? 1 : 0;
        t.within_3_expected += within_3_percent(curve, outcome, Reference::expected_on_dense_lines) ? 1 : 0;
        t.probe_iterations += static_cast<double>(outcome.probe_iterations);
      } catch (const dvfslab::Error& e) {
        fmt::print("tune_bench: skipped {} | {} | {}: {}\n", curve.file, curve.name, strategy, e.what());
      }
    }
  }
  print_loto_by(totals, tables, candidates, Reference::table_least);
  print_loto_by(totals, tables, candidates, Reference::expected_on_dense_lines);
}

// On the dense lines, every strategy's job scored against the table's least energy
// and against the least of the line's expected energy (docs/tune.md#loto): a
// table that measured each setting once makes its least value partly luck.
void print_dense_lines(const std::vector<Curve>& curves) {
  std::vector<std::pair<std::size_t, const Curve*>> dense;  // with the curve's seed
  for (std::size_t i = 0; i < curves.size(); ++i)
    if (!curves[i].expected_energy_j.empty()) dense.emplace_back(i + 1, &curves[i]);
  if (dense.empty()) return;
  fmt::print(
      "\n== dense lines (one knob, {} or more settings: {} curves): job energy within 3 % of the table's "
      "least and of the expected line's least (local quadratic over {} settings on each side)\n\n{:<28} "
      "{:>9} {:>12} {:>8}\n",
      dense_line_settings, dense.size(), expected_line_span, "policy", "≤3% table", "≤3% expected", "pi");
  const auto row = [&](const std::string& name, const auto& outcome_of) {
    int table_within = 0, expected_within = 0;
    double probing = 0;
    for (const auto& [seed, curve] : dense) {
      const Outcome outcome = outcome_of(*curve, seed);
      table_within += outcome.energy_j <= oracle_energy_of(*curve) * 1.03 ? 1 : 0;
      expected_within += outcome.expected_energy_j <= expected_oracle_energy_of(*curve) * 1.03 ? 1 : 0;
      probing += static_cast<double>(outcome.probe_iterations);
    }
    const auto share = [&](int count) { return 100.0 * count / static_cast<double>(dense.size()); };
    fmt::print("{:<28} {:>7.1f} % {:>10.1f} % {:>8.0f}\n", name, share(table_within), share(expected_within),
               probing / static_cast<double>(dense.size()));
  };
  std::vector<std::string> strategies{"online"};
  for (const auto& definition : dvfslab::search_strategies()) strategies.emplace_back(definition.name);
  for (const std::string& strategy : strategies)
    row("tuner " + strategy,
        [&](const Curve& c, std::uint64_t seed) { return run_tuner(c, strategy, seed); });
  row("zeus", [](const Curve& c, std::uint64_t seed) { return run_zeus(c, seed); });
  row("best candidate held", [](const Curve& c, std::uint64_t) {
    Setting best;
    for (const Setting& s : c.candidates_for("online"))
      if (c.expected_energy_j.at(s) < c.expected_energy_j.at(best)) best = s;
    const double iterations = static_cast<double>(job_iterations);
    return Outcome{c.at(best).energy_j * iterations, 0, c.expected_energy_j.at(best) * iterations};
  });
}

int run_bench(const std::filesystem::path& data, const std::string& strategy, bool smoke, bool clock_maps) {
  const std::vector<Curve> curves = load_curves(data, smoke, clock_maps);
  if (curves.empty())
    throw dvfslab::ConfigError("no curve of two or more settings in '" + data.string() + "'");

  fmt::print(
      "tune_bench: {} curves, a {}-iteration job, warm-up {}, windows of {} iterations, {:.0f} % noise, "
      "tuner strategy {}{}\n",
      curves.size(), job_iterations, warmup_iterations, window_iterations, noise * 100, strategy,
      clock_maps ? "; each dense line of SM clocks tuned with its GPU's clock map learned from the other "
                   "lines of its table (leave-one-curve-out) and every SM clock a candidate"
                 : "");
  if (noise_draw != 0) fmt::print("noise draw {} (--seed)\n", noise_draw);
  print_loto(curves);
  fmt::print("\n== the tuner's strategy {} on every table, against zeus and the oracle\n", strategy);
  struct FileTotals {
    int curves = 0, within_3 = 0, fewer_probes = 0, zeus_within_3 = 0, candidates_within_3 = 0;
    std::vector<double> tuner_saving, zeus_saving, oracle_saving;
    double tuner_probes = 0, zeus_probes = 0;
  };
  std::map<std::string, FileTotals> per_file;
  FileTotals all;
  std::uint64_t seed = 1;
  for (const Curve& curve : curves) {
    const double oracle = oracle_energy_of(curve);
    const double at_default = curve.points.at(Setting{}).energy_j * job_iterations;
    const Outcome tuner = run_tuner(curve, strategy, seed);
    const Outcome zeus = run_zeus(curve, seed);
    ++seed;
    for (FileTotals* t : {&per_file[curve.file], &all}) {
      ++t->curves;
      if (tuner.energy_j <= oracle * 1.03) ++t->within_3;
      if (zeus.energy_j <= oracle * 1.03) ++t->zeus_within_3;
      if (best_candidate_energy_of(curve, strategy) <= oracle * 1.03) ++t->candidates_within_3;
      if (tuner.probe_iterations < zeus.probe_iterations) ++t->fewer_probes;
      t->tuner_saving.push_back(1 - tuner.energy_j / at_default);
      t->zeus_saving.push_back(1 - zeus.energy_j / at_default);
      t->oracle_saving.push_back(1 - oracle / at_default);
      t->tuner_probes += static_cast<double>(tuner.probe_iterations);
      t->zeus_probes += static_cast<double>(zeus.probe_iterations);
    }
  }
  const auto row = [](const std::string& name, const FileTotals& t) {
    fmt::print(
        "{:<36} {:>6} {:>9.1f} % {:>9.1f} % {:>9.1f} % {:>9.2f} % {:>9.2f} % {:>9.2f} % {:>8.0f} {:>8.0f} "
        "{:>9.1f} %\n",
        name, t.curves, 100.0 * t.within_3 / t.curves, 100.0 * t.zeus_within_3 / t.curves,
        100.0 * t.candidates_within_3 / t.curves, 100 * median(t.tuner_saving), 100 * median(t.zeus_saving),
        100 * median(t.oracle_saving), t.tuner_probes / t.curves, t.zeus_probes / t.curves,
        100.0 * t.fewer_probes / t.curves);
  };
  fmt::print("\n{:<36} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>8} {:>8} {:>11}\n", "file",
             "curves", "tuner≤3%", "zeus≤3%", "cands≤3%", "tuner save", "zeus save", "oracle save",
             "tuner pi", "zeus pi", "fewer pi");
  for (const auto& [file, totals] : per_file) row(file, totals);
  row("all", all);
  const double within = static_cast<double>(all.within_3) / all.curves;
  const double saving_ratio = median(all.tuner_saving) / median(all.oracle_saving);
  const double fewer = static_cast<double>(all.fewer_probes) / all.curves;
  fmt::print(
      "\n(≤3%: job energy within 3 % of the oracle, probing included; cands≤3%: the best of the tuner's "
      "candidates held from the start is (a ceiling for any strategy choosing among them); save: median "
      "saving against the "
      "default; pi: mean probing iterations per job; fewer pi: tuner probed fewer iterations than zeus)\n");
  fmt::print("target  job energy within 3 % of the oracle on >= 90 % of curves: {:.1f} % {}\n", 100 * within,
             within >= 0.9 ? "MET" : "NOT MET");
  fmt::print("target  median saving >= 90 % of the oracle's: {:.1f} % {}\n", 100 * saving_ratio,
             saving_ratio >= 0.9 ? "MET" : "NOT MET");
  fmt::print("target  fewer probing iterations than zeus on >= 90 % of curves: {:.1f} % {}\n", 100 * fewer,
             fewer >= 0.9 ? "MET" : "NOT MET");
  print_dense_lines(curves);
  return 0;
}

}  // namespace

// The online search's near-tie share halved and doubled, registered as strategies of
// their own so that the headline's rule chooses among them and "online".
void register_online_variants() {
  const dvfslab::tune::OnlineSettings chosen;
  for (const double factor : {0.5, 2.0}) {
    dvfslab::tune::OnlineSettings settings = chosen;
    settings.near_tie_fraction = chosen.near_tie_fraction * factor;
    dvfslab::register_strategy(
        {fmt::format("online-tie{:.0f}", 100 * settings.near_tie_fraction),
         "the tuner's online search with another near-tie share (tune_bench --online-variants)",
         [settings](const dvfslab::StrategyOptions& options) {
           return dvfslab::tune::make_online_strategy(options, settings);
         }});
  }
}

int main(int argc, char** argv) {
  constexpr const char* usage =
      "usage: tune_bench [DATA_DIR [STRATEGY]] [--smoke] [--online-variants] [--clock-map] [--seed N]\n"
      "  (default: data/published, the tuner's strategy online)\n"
      "  --smoke            the first curve of each table\n"
      "  --online-variants  also online-tie1 and online-tie4, the online search with its 2 % near-tie\n"
      "                     share moved to 1 % and 4 %, as candidates\n"
      "  --clock-map        each dense line of SM clocks tuned with its GPU's clock map learned from the\n"
      "                     other lines of its table, leave-one-curve-out, every SM clock a candidate\n"
      "  --seed N           another draw of the windows' noise (0, the default, is the one the docs quote)\n";
  if (const auto status = dvfslab::bench::usage_exit(argc, argv, usage, 0, 7)) return *status;
  std::vector<std::string> positional;
  bool smoke = false;
  bool clock_maps = false;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--smoke") {
      smoke = true;
    } else if (argument == "--clock-map") {
      clock_maps = true;
    } else if (argument == "--seed" && i + 1 < argc) {
      try {
        noise_draw = std::stoull(argv[++i]);
      } catch (const std::exception&) {
        std::fputs(usage, stderr);
        return 2;
      }
    } else if (argument == "--online-variants") {
      register_online_variants();
    } else {
      positional.push_back(argument);
    }
  }
  if (positional.size() > 2 || (!positional.empty() && positional.front().rfind("--", 0) == 0)) {
    std::fputs(usage, stderr);
    return 2;
  }
  try {
    return run_bench(!positional.empty() ? positional[0] : "data/published",
                     positional.size() > 1 ? positional[1] : "online", smoke, clock_maps);
  } catch (const dvfslab::Error& e) {
    fmt::print(stderr, "tune_bench: error: {}\n", e.what());
    return 1;
  }
}
