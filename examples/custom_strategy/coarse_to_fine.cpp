// A search strategy written outside the library: coarse to fine. Per case it first
// measures five settings spread over those the plan's knobs name (and the
// default), then halves the gaps on both sides of the best setting so far until
// its neighbours in the plan are measured: the floor of the energy valley in a
// fraction of the grid's points.
//
// The program registers it by name (register_strategy), as a host would at
// start-up, and then names it like a built-in strategy: a SearchSession made by
// name sweeps a plan with it, and a Tuner whose options name it tunes a simulated
// job.
//
// Usage: custom_strategy_example DATABASE [DEVICE]   (device: sim:v100 by default)
#include <cstdio>
#include <exception>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dvfslab/default_workloads.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/search.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/sweep.hpp"
#include "dvfslab/tune_job.hpp"
#include "dvfslab/tuner.hpp"

namespace {

using namespace dvfslab;

class CoarseToFine final : public SearchStrategy {
 public:
  std::string name() const override { return "coarse-to-fine"; }

  std::vector<ScheduledPoint> propose(const SearchSpace& space,
                                      std::span<const PointOutcome> measured) override {
    std::vector<ScheduledPoint> next;
    const std::size_t count = space.settings.size();
    for (const Case& workload_case : space.cases) {
      const auto add = [&](const Setting& setting) {
        next.push_back(ScheduledPoint{workload_case, setting, PointRole::grid, 0});
      };
      std::map<std::size_t, double> energy;  // by index into space.settings (ascending)
      for (const PointOutcome& outcome : measured) {
        if (!(outcome.point.workload_case == workload_case)) continue;
        for (std::size_t i = 0; i < count; ++i) {
          if (space.settings[i] == outcome.point.setting) energy[i] = mean(outcome.energy_per_item_j_series);
        }
      }
      if (count == 0) continue;
      if (energy.empty()) {
        if (space.policy.include_default) add(Setting{});
        std::set<std::size_t> coarse;
        for (std::size_t k = 0; k < coarse_points; ++k) coarse.insert(k * (count - 1) / (coarse_points - 1));
        for (std::size_t i : coarse) add(space.settings[i]);
        continue;
      }
      std::size_t best = energy.begin()->first;
      for (const auto& [index, value] : energy) {
        if (value < energy[best]) best = index;
      }
      const auto above = energy.upper_bound(best);
      const auto below = energy.find(best);
      if (below != energy.begin() && best - std::prev(below)->first > 1)
        add(space.settings[(std::prev(below)->first + best) / 2]);
      if (above != energy.end() && above->first - best > 1) add(space.settings[(best + above->first) / 2]);
    }
    return next;
  }

 private:
  static constexpr std::size_t coarse_points = 5;

  static double mean(const std::vector<double>& values) {
    double sum = 0;
    for (double value : values) sum += value;
    return values.empty() ? 0 : sum / static_cast<double>(values.size());
  }
};

// Prints, per case, how many settings were measured and the best of them.
class Summary final : public ProgressReporter {
 public:
  void start(const Schedule&, const GpuIdentity& gpu, std::size_t) override { gpu_ = gpu.name; }
  void point_done(const PointOutcome& outcome, std::size_t, std::size_t) override {
    auto& best = best_[outcome.point.workload_case];
    ++best.points;
    if (outcome.energy_per_item_j && (!best.energy || *outcome.energy_per_item_j < *best.energy)) {
      best.energy = outcome.energy_per_item_j;
      best.setting = outcome.point.setting;
    }
  }
  void finish() override {}

  void print(std::size_t grid_settings) const {
    for (const auto& [workload_case, best] : best_) {
      std::printf("coarse-to-fine on %s: %s measured %d of %zu settings, best %s at %.4g J/item\n",
                  gpu_.c_str(), to_string(workload_case).c_str(), best.points, grid_settings,
                  to_string(best.setting).c_str(), best.energy.value_or(0.0));
    }
  }

 private:
  struct Best {
    int points = 0;
    std::optional<double> energy;
    Setting setting;
  };
  std::string gpu_;
  std::map<Case, Best> best_;
};

const char* const plan_text = R"(
[knobs]
sm_mhz = { min = 500 }
[[cases]]
workloads = ["resnet50"]
batch_sizes = [64]
modes = ["infer"]
[measure]
warmup_iterations = 2
duration_s = 1.0
settle_s = 0.1
drift_check = false
)";

// The strategy's plan sweep, asked for by name.
void sweep_by_name(Gpu& gpu, const char* database) {
  const Plan plan = parse_plan_text(plan_text, "coarse_to_fine.toml");
  const WorkloadRegistry registry = make_default_workload_registry();
  Store store(database);
  Summary summary;
  SearchSession session(make_strategy("coarse-to-fine", StrategyOptions{}), SearchLimits{}, gpu.clock());
  run_sweep(gpu, plan, registry, store, SweepOptions{}, summary, session);
  const auto settings = expand_settings(plan.knobs, gpu.clock_table(), gpu.power_limits(), gpu.identity().name);
  summary.print(settings.size() + 1);
}

// A simulated job tuned with the strategy, named in the tuner's options.
void tune_by_name(Gpu& gpu) {
  TunerOptions options;
  options.strategy = "coarse-to-fine";
  Tuner tuner(gpu, options);
  run_sim_job(gpu, tuner, parse_sim_job("resnet50/infer/b64:2000"));
  const TuneReport report = tuner.finish();
  const auto& best = report.phases.front().best;
  std::printf("coarse-to-fine tuned %s by name: %zu probe windows, held %s\n", gpu.identity().name.c_str(),
              report.probes.size(), best ? to_string(*best).c_str() : "nothing (still probing)");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: custom_strategy_example DATABASE [DEVICE]\n");
    return 2;
  }
  try {
    register_strategy({"coarse-to-fine", "five spread settings, then halving the gaps around the best",
                       [](const StrategyOptions&) { return std::make_unique<CoarseToFine>(); }});
    auto gpu = open_gpu(argc > 2 ? argv[2] : "sim:v100");
    sweep_by_name(*gpu, argv[1]);
    tune_by_name(*gpu);
    return 0;
  } catch (const dvfslab::Error& e) {
    std::fprintf(stderr, "custom_strategy_example: error: %s\n", e.what());
    return 1;
  }
}
