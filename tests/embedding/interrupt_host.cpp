// A host program that embeds dvfslab (not the dvfslab binary): it sweeps on the
// fake NVML with clock changes allowed, inside an InterruptScope, and its workload
// sends the process SIGINT while a changed setting is measured. Passing means: the
// sweep ends with InterruptedError caught here, the GPU is back as found (the
// fake's setter log and NVML's control state say so), and this process keeps
// running and exits 0.
//
// Usage: embedding_interrupt_host FAKE_NVML_LIBRARY WORK_DIR
// (the fake simulates the GPUs of DVFSLAB_FAKE_NVML_GPUS and logs setter calls to
// DVFSLAB_FAKE_NVML_LOG: the test sets both.)
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/sweep.hpp"

namespace {

using namespace dvfslab;

// 8 items per 10 ms of wall time; at its `interrupt_at`-th call it raises SIGINT
// and waits for the signal thread to have restored the GPU, so the interrupt
// lands inside a measured window of a changed setting.
class SleepingWorkload final : public Workload {
 public:
  SleepingWorkload(Case workload_case, const InterruptScope& scope, int interrupt_at)
      : case_(std::move(workload_case)), scope_(scope), interrupt_at_(interrupt_at) {}
  const Case& workload_case() const override { return case_; }
  std::string item_unit() const override { return "items"; }
  double items_per_iteration() const override { return 8; }
  void run_iterations(std::int64_t count) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(10) * count);
    if (++calls_ != interrupt_at_) return;
    std::raise(SIGINT);
    for (int waited = 0; !scope_.signal() && waited < 500; ++waited) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

 private:
  Case case_;
  const InterruptScope& scope_;
  int interrupt_at_;
  int calls_ = 0;
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int fail(const std::string& why) {
  std::fprintf(stderr, "embedding_interrupt_host: FAILED: %s\n", why.c_str());
  return 1;
}

const char* const plan_text = R"(
[knobs]
sm_mhz = [1005, 1500]
power_limit_w = [500]
[[cases]]
workloads = ["sleeper"]
batch_sizes = [8]
modes = ["infer"]
[measure]
warmup_iterations = 1
duration_s = 0.2
settle_s = 0
drift_check = false
order = "ascending"
include_default = false
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return fail("usage: embedding_interrupt_host FAKE_NVML_LIBRARY WORK_DIR");
  const std::filesystem::path work = argv[2];
  const char* log_variable = std::getenv("DVFSLAB_FAKE_NVML_LOG");
  if (log_variable == nullptr) return fail("DVFSLAB_FAKE_NVML_LOG is not set");
  const std::filesystem::path setter_log = log_variable;
  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work / "state");
  std::filesystem::remove(setter_log);

  OpenOptions open;
  open.libraries["nvml"] = argv[1];  // passed in, not through DVFSLAB_NVML_LIBRARY
  std::unique_ptr<Gpu> gpu = open_gpu("0", open);
  const ControlState found = gpu->control_state();

  const InterruptScope scope;
  WorkloadRegistry registry;
  registry.add(
      WorkloadInfo{"sleeper", "items", 8, "sleeps in wall time"}, [](const Gpu&) { return true; },
      [&scope](const Case& c, Gpu&, const WorkloadOptions&) -> std::unique_ptr<Workload> {
        // Call 1 is the warm-up of the first point (1005 MHz); call 4 is inside its window.
        return std::make_unique<SleepingWorkload>(c, scope, 4);
      });
  Store store(work / "host.sqlite");
  SweepOptions options;
  options.allow_clock_changes = true;
  options.state_dir = work / "state";
  auto progress = make_silent_progress_reporter();
  try {
    run_sweep(*gpu, parse_plan_text(plan_text, "host.toml"), registry, store, options, *progress);
    return fail("the sweep finished: the interrupt did not reach the host");
  } catch (const InterruptedError& e) {
    std::printf("host regained control: %s\n", e.what());
  }

  if (scope.signal() != SIGINT) return fail("the scope did not record SIGINT");
  const std::string calls = read_file(setter_log);
  const auto last_lock = calls.rfind("nvmlDeviceSetGpuLockedClocks");
  const auto last_reset = calls.rfind("nvmlDeviceResetGpuLockedClocks");
  if (last_lock == std::string::npos) return fail("no clock was changed before the interrupt:\n" + calls);
  if (last_reset == std::string::npos || last_reset < last_lock) {
    return fail("the SM clock lock was not reset after the interrupt:\n" + calls);
  }
  if (!(gpu->control_state() == found)) return fail("the GPU's control state differs from the state found");
  for (const auto& run : store.runs()) {
    if (run.status != RunStatus::interrupted) return fail("the run is not recorded as interrupted");
  }
  std::printf("GPU restored (%zu setter calls logged); the host goes on\n",
              static_cast<std::size_t>(std::count(calls.begin(), calls.end(), '\n')));
  return 0;
}
