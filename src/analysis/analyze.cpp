// The analysis pipeline: rows -> settings -> baseline, optimum, Pareto -> aggregates.
#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab {

Analysis analyze(const std::vector<ResultRow>& rows, const Objective& objective) {
  if (rows.empty()) {
    throw ConfigError(
        "nothing to analyze: the input holds no measurement rows (run a sweep or import a sweep table "
        "first)");
  }
  Analysis analysis;
  analysis.objective = objective;
  analysis.cases = summarize_points(rows);
  for (CaseAnalysis& c : analysis.cases) {
    choose_optimum(c, objective);
    compare_profiles(c, objective);
    c.pareto = pareto_frontier(c.points);
  }
  aggregate(analysis);
  return analysis;
}

}  // namespace dvfslab
