// Embedding dvfslab in a host program (docs/library.md): the host opens the GPU
// with its own options, takes the library's default workloads, receives progress
// through a reporter, and opts in to interrupt handling for the sweep only. On
// Ctrl-C the GPU is restored and run_sweep throws InterruptedError back here; the
// library never exits the process.
//
// Usage: embedding_example DATABASE [DEVICE]   (device: sim:v100 by default)
#include <cstdio>
#include <limits>
#include <string>

#include "dvfslab/default_workloads.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/sweep.hpp"

namespace {

const char* const plan_text = R"(
[knobs]
sm_mhz = { count = 4, min = 600 }
[[cases]]
workloads = ["alexnet"]
batch_sizes = [128]
modes = ["infer"]
[measure]
duration_s = 1.0
settle_s = 0.2
)";

// The host's own progress sink: here a log line per point, and the best point.
class HostReporter final : public dvfslab::ProgressReporter {
 public:
  void start(const dvfslab::Schedule& schedule, const dvfslab::GpuIdentity& gpu, std::size_t) override {
    std::fprintf(stderr, "host: sweeping %zu points on %s\n", schedule.points.size(), gpu.name.c_str());
  }
  void point_done(const dvfslab::PointOutcome& outcome, std::size_t done, std::size_t total) override {
    std::fprintf(stderr, "host: %zu/%zu %s\n", done, total,
                 dvfslab::to_string(outcome.point.setting).c_str());
    if (outcome.energy_per_item_j && *outcome.energy_per_item_j < best_energy) {
      best_energy = *outcome.energy_per_item_j;
      best = outcome.point.setting;
    }
  }
  void finish() override {}

  double best_energy = std::numeric_limits<double>::infinity();
  dvfslab::Setting best;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: embedding_example DATABASE [DEVICE]\n");
    return 2;
  }
  try {
    dvfslab::OpenOptions open;
    open.read_only = false;  // a host might read its own configuration here
    auto gpu = dvfslab::open_gpu(argc > 2 ? argv[2] : "sim:v100", open);
    const dvfslab::Plan plan = dvfslab::parse_plan_text(plan_text, "embedded.toml");
    const dvfslab::WorkloadRegistry registry = dvfslab::make_default_workload_registry();
    dvfslab::Store store(argv[1]);
    dvfslab::SweepOptions options;
    options.allow_clock_changes = true;  // simulated: nothing real changes

    HostReporter progress;
    const dvfslab::InterruptScope interrupts;  // SIGINT/SIGTERM now restore the GPU and return here
    const dvfslab::SweepResult result = dvfslab::run_sweep(*gpu, plan, registry, store, options, progress);
    std::printf("swept %zu points on %s: least energy per image at %s (%.4g J)\n", result.points_measured,
                gpu->identity().name.c_str(), dvfslab::to_string(progress.best).c_str(),
                progress.best_energy);
    return 0;
  } catch (const dvfslab::InterruptedError& e) {
    std::printf("interrupted, the GPU is restored: %s\n", e.what());
    return 0;
  } catch (const dvfslab::Error& e) {
    std::fprintf(stderr, "embedding_example: error: %s\n", e.what());
    return 1;
  }
}
