// Leave-one-table-out choice (issue 27, "Method, not constants"): a tunable choice
// is made from a declared candidate set on every table but one and scored on the
// one left out, for every table in turn; the in-sample choice (made on all tables)
// is scored beside it. Header-only: every .cpp in bench/ is a benchmark of its own.
#pragma once

#include <cmath>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace dvfslab::bench {

// How a candidate did on one table: `merit` higher is better, `cost` lower is better
// and breaks ties of merit; `admissible` false keeps a candidate from being chosen
// while another is admissible (e.g. a probe budget it exceeds).
struct TableScore {
  double merit = 0;
  double cost = 0;
  bool admissible = true;
};

// Whether `challenger` leads `by_default` by more than twice the standard error of
// the mean of their table-by-table differences. One table gives no spread to judge by.
inline bool clearly_ahead(const std::vector<double>& challenger, const std::vector<double>& by_default) {
  const std::size_t n = challenger.size();
  if (n < 2) return false;
  double mean = 0;
  for (std::size_t i = 0; i < n; ++i) mean += (challenger[i] - by_default[i]) / static_cast<double>(n);
  double squares = 0;
  for (std::size_t i = 0; i < n; ++i) squares += std::pow(challenger[i] - by_default[i] - mean, 2);
  const double standard_error = std::sqrt(squares / static_cast<double>(n - 1) / static_cast<double>(n));
  return mean > 2 * standard_error;
}

// The choice made on `tables` (each weighs the same, however many curves it has):
// the admissible candidate with the highest mean merit, ties to the lower mean cost,
// then to the earlier candidate. A candidate is admissible when its score is
// admissible on every one of `tables`. With none admissible, the least mean cost,
// ties to the higher mean merit: where every candidate misses the budget alike,
// accuracy decides as it does within it.
//
// The default (declared first) holds against a candidate of higher mean merit unless
// that lead is clear: more than twice its standard error over the tables (the table-by-
// table differences' spread; ~95 %). A table of five curves moves its share by 20
// points with one curve, so a lead made of one such table's luck is not a reason to
// leave the default; candidates of equal mean merit still part by cost.
inline std::string choose_on(const std::vector<std::string>& tables,
                             const std::vector<std::string>& candidates,
                             const std::function<TableScore(const std::string&, const std::string&)>& score) {
  struct Mean {
    double merit = 0, cost = 0;
    bool admissible = true;
    std::vector<double> merits;  // table by table, for the lead over the default
  };
  std::vector<Mean> means;
  for (const std::string& candidate : candidates) {
    Mean mean;
    for (const std::string& table : tables) {
      const TableScore s = score(candidate, table);
      mean.merit += s.merit / static_cast<double>(tables.size());
      mean.cost += s.cost / static_cast<double>(tables.size());
      mean.admissible = mean.admissible && s.admissible;
      mean.merits.push_back(s.merit);
    }
    means.push_back(mean);
  }
  // A lead that is not clear keeps a candidate out of the choice, as the budget does.
  const Mean& by_default = means.front();
  if (by_default.admissible) {
    for (std::size_t i = 1; i < means.size(); ++i) {
      if (means[i].merit > by_default.merit && !clearly_ahead(means[i].merits, by_default.merits))
        means[i].admissible = false;
    }
  }
  bool any_admissible = false;
  for (const Mean& mean : means) any_admissible = any_admissible || mean.admissible;
  std::size_t best = 0;
  for (std::size_t i = 1; i < means.size(); ++i) {
    const Mean& a = means[i];
    const Mean& b = means[best];
    if (!any_admissible) {
      if (a.cost < b.cost || (a.cost == b.cost && a.merit > b.merit)) best = i;
      continue;
    }
    if (a.admissible != b.admissible) {
      if (a.admissible) best = i;
      continue;
    }
    if (a.merit > b.merit || (a.merit == b.merit && a.cost < b.cost)) best = i;
  }
  return candidates[best];
}

struct LotoChoices {
  std::map<std::string, std::string> held_out;  // table → the choice made without it
  std::string in_sample;                        // the choice made on all tables
};

inline LotoChoices leave_one_table_out(
    const std::vector<std::string>& tables, const std::vector<std::string>& candidates,
    const std::function<TableScore(const std::string&, const std::string&)>& score) {
  LotoChoices choices;
  choices.in_sample = choose_on(tables, candidates, score);
  for (const std::string& left_out : tables) {
    std::vector<std::string> others;
    for (const std::string& table : tables) {
      if (table != left_out) others.push_back(table);
    }
    choices.held_out[left_out] = others.empty() ? choices.in_sample : choose_on(others, candidates, score);
  }
  return choices;
}

}  // namespace dvfslab::bench
