// search_bench's figures over a set of runs (Tally) and its headline: the strategy
// chosen leave-one-table-out (loto.hpp). Header-only: every .cpp in bench/ is a
// benchmark of its own.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "loto.hpp"

namespace dvfslab::bench {

inline double quantile_of(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size()))) - 1;
  return values[std::min(index, values.size() - 1)];
}

struct Tally {
  std::vector<double> probes;
  std::vector<double> regret;
  double windows = 0;
  double exhaustive_windows = 0;
  double floor_windows = 0;

  void add(int run_probes, double regret_pct, int run_windows, int run_exhaustive, int run_floor) {
    probes.push_back(run_probes);
    regret.push_back(regret_pct);
    windows += run_windows;
    exhaustive_windows += run_exhaustive;
    floor_windows += run_floor;
  }
  void merge(const Tally& other) {
    probes.insert(probes.end(), other.probes.begin(), other.probes.end());
    regret.insert(regret.end(), other.regret.begin(), other.regret.end());
    windows += other.windows;
    exhaustive_windows += other.exhaustive_windows;
    floor_windows += other.floor_windows;
  }
  double within_1_pct() const {
    const auto within = std::count_if(regret.begin(), regret.end(), [](double r) { return r <= 1.0; });
    return regret.empty() ? 0 : 100.0 * static_cast<double>(within) / static_cast<double>(regret.size());
  }
  double gpu_pct() const { return exhaustive_windows > 0 ? 100.0 * windows / exhaustive_windows : 0; }
};

// The probe budgets (issue 27): p90 probes <= 12 for one knob, <= 20 for two.
inline double loto_probe_budget(int knobs) { return knobs == 1 ? 12 : 20; }
inline const char* knobs_text(int knobs) { return knobs == 1 ? "one knob" : "two knobs"; }

// (set, scope, knobs, objective, noise, strategy) → tally; scope "all" or a table.
using TallyKey = std::tuple<std::string, std::string, int, std::string, double, std::string>;

inline void print_loto_row(const std::string& scope, std::size_t curves, const std::string& chosen,
                           const Tally& held_out, const std::string& in_sample_choice, const Tally& in_sample,
                           const Tally& by_default) {
  std::printf(
      "%-34s %6zu  %-13s %6.1f%% %5.1f %6.1f%%   %-13s %6.1f%% %5.1f %6.1f%%   %6.1f%% %5.1f %6.1f%%\n",
      scope.c_str(), curves, chosen.c_str(), held_out.within_1_pct(), quantile_of(held_out.probes, 0.9),
      held_out.gpu_pct(), in_sample_choice.c_str(), in_sample.within_1_pct(),
      quantile_of(in_sample.probes, 0.9), in_sample.gpu_pct(), by_default.within_1_pct(),
      quantile_of(by_default.probes, 0.9), by_default.gpu_pct());
}

// The strategy for `knobs` knobs and the energy objective at `noise`, chosen on all
// tables but one among `candidates` (the exhaustive grid is the reference, not a
// candidate): the highest share within 1 % among those within the probe budget on
// every other table, ties to fewer p90 probes, the default kept against a lead that
// is not clear (loto.hpp). Then scored on the table left out.
inline void print_loto(const std::map<TallyKey, Tally>& tallies, const std::string& set, int knobs,
                       double noise, const std::vector<std::string>& tables,
                       const std::vector<std::string>& candidates) {
  const auto tally_of = [&](const std::string& strategy, const std::string& table) -> const Tally* {
    const auto found = tallies.find({set, table, knobs, "energy", noise, strategy});
    return found == tallies.end() ? nullptr : &found->second;
  };
  std::vector<std::string> scored;
  for (const std::string& table : tables) {
    if (tally_of(candidates.front(), table)) scored.push_back(table);
  }
  if (scored.empty()) return;
  const auto score = [&](const std::string& strategy, const std::string& table) {
    const Tally* tally = tally_of(strategy, table);
    if (!tally) return TableScore{0, 1e9, false};
    const double p90 = quantile_of(tally->probes, 0.9);
    return TableScore{tally->within_1_pct(), p90, p90 <= loto_probe_budget(knobs)};
  };
  const LotoChoices choices = leave_one_table_out(scored, candidates, score);
  std::printf(
      "\n== leave-one-table-out, %s %s, %s, objective energy, %.0f %% noise: the strategy chosen "
      "on the other tables (candidates:",
      set.c_str(), knobs == 1 ? "curves" : "surfaces", knobs_text(knobs), 100 * noise);
  for (const std::string& candidate : candidates) std::printf(" %s", candidate.c_str());
  std::printf(
      "; the highest mean share within 1 %% among those with p90 probes <= %.0f on every table, ties to "
      "fewer probes, the default kept unless that lead is clear: over 2 sd/√n of the n tables' differences), "
      "scored on the table left out; in-sample: chosen on all tables; default: %s, the "
      "default strategy, on the same table\n\n",
      loto_probe_budget(knobs), candidates.front().c_str());
  std::printf("%-34s %6s  %-13s %7s %5s %7s   %-13s %7s %5s %7s   %7s %5s %7s\n", "held-out table", "curves",
              "loto", "in1%", "p.p90", "gpu", "in-sample", "in1%", "p.p90", "gpu", "default", "p.p90", "gpu");
  Tally all_held_out;
  Tally all_in_sample;
  Tally all_by_default;
  for (const std::string& table : scored) {
    const std::string& chosen = choices.held_out.at(table);
    const Tally* held_out = tally_of(chosen, table);
    const Tally* in_sample = tally_of(choices.in_sample, table);
    const Tally* by_default = tally_of(candidates.front(), table);
    if (!held_out || !in_sample || !by_default) {
      std::printf("%-34s no runs of %s or %s on it\n", table.c_str(), chosen.c_str(),
                  choices.in_sample.c_str());
      continue;
    }
    all_held_out.merge(*held_out);
    all_in_sample.merge(*in_sample);
    all_by_default.merge(*by_default);
    print_loto_row(table, held_out->regret.size(), chosen, *held_out, choices.in_sample, *in_sample,
                   *by_default);
  }
  print_loto_row(knobs == 1 ? "all (pooled over curves)" : "all (pooled over surfaces)",
                 all_held_out.regret.size(), "-", all_held_out, choices.in_sample, all_in_sample,
                 all_by_default);
}

// The headline: the strategy chosen leave-one-table-out at each noise level run
// without added noise or at 1 %, for each set of curves, one knob then two.
inline void print_headline(const std::map<TallyKey, Tally>& tallies, const std::vector<std::string>& tables,
                           const std::vector<double>& noise_levels,
                           const std::vector<std::string>& strategies) {
  std::vector<std::string> candidates;
  if (std::find(strategies.begin(), strategies.end(), "auto") != strategies.end())
    candidates.push_back("auto");
  for (const std::string& strategy : strategies) {
    if (strategy != "auto" && strategy != "grid") candidates.push_back(strategy);
  }
  if (candidates.empty()) return;
  for (const int knobs : {1, 2}) {
    for (const std::string set : {"published", "dense"}) {
      for (const double noise : noise_levels) {
        if (noise <= 0.01) print_loto(tallies, set, knobs, noise, tables, candidates);
      }
    }
  }
}

}  // namespace dvfslab::bench
