#pragma once
// The in-memory plan of `dvfslab search`: one case over the chosen knobs' supported
// values on the GPU, written as plan TOML so that it is checked, stored and resumed
// like any plan.
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/plan.hpp"

namespace dvfslab::cli {

struct SearchKnobs {
  bool sm = false;
  bool mem = false;
  bool power = false;
};
// "sm,mem,pl" in any order; throws UsageError for an unknown, repeated or missing knob.
SearchKnobs parse_search_knobs(const std::string& text);

struct SearchCase {
  std::string workload;
  std::vector<std::string> command;  // empty: a built-in (or replayed) workload
  std::optional<int> batch;
  std::string mode;
  std::string precision;
};

struct SearchMeasure {
  std::optional<double> duration_s;
  int repetitions = 2;
  int max_repetitions = 5;
  double ci_target_pct = 1.0;
  double settle_s = 1.0;
};

// The plan's TOML, its first lines recording the strategy and the objective. The power limits are 16
// values spread over the GPU's range, or on a replayed table the whole watts it
// holds for the workload.
std::string search_plan_text(Gpu& gpu, const SearchCase& search_case, const SearchKnobs& knobs,
                             const SearchMeasure& measure, const std::string& strategy,
                             const std::string& objective);

}  // namespace dvfslab::cli
