#pragma once
// Running a plan: every scheduled point measured on one GPU under a ClockGuard (or
// on every GPU of a job under a ClockGuardSet), each measurement committed to the
// store at once, resumable after a crash.
//
//   Plan plan = load_plan_file("plan.toml");
//   Store store("dvfslab.sqlite");
//   auto progress = make_text_progress_reporter(write_to_my_log, /*redraw_in_place=*/false);
//   SweepResult result = run_sweep(gpu, plan, registry, store, options, *progress);
//
// Which points are measured is the plan's grid unless another SearchStrategy is
// given (dvfslab/strategy.hpp).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/types.hpp"
#include "dvfslab/workload.hpp"

namespace dvfslab {

class Store;

// The plan's stop rule (make_stop_rule) asked once: true while fewer than the
// minimum repetitions were measured, or the 95 % confidence half-width of energy
// per item is above the target and the maximum is not reached.
bool needs_another_repetition(const MeasurePolicy& policy, std::span<const double> energy_per_item_j);

class ProgressReporter {
 public:
  virtual ~ProgressReporter() = default;
  // `schedule`: the points the strategy planned up front (empty for an adaptive one).
  virtual void start(const Schedule& schedule, const GpuIdentity& gpu, std::size_t already_done) = 0;
  // Called after each point; `done` counts the points finished so far (skipped ones
  // too); `total` is the planned count, or `done` when more were measured.
  virtual void point_done(const PointOutcome& outcome, std::size_t done, std::size_t total) = 0;
  virtual void finish() = 0;
};

// What the progress of an adaptive search can say before it knows its points.
struct SearchProgressBudget {
  std::optional<int> points;      // distinct settings, the default included
  std::optional<double> seconds;  // of GPU time
};

// Progress as text handed to `write` (which should flush): a bar with an ETA
// redrawn in place ("\r", erase to the end of the line) when `redraw_in_place`,
// for a terminal; one plain line per point otherwise (logs, tests). A strategy
// that plans nothing up front is a search: its points are numbered as probes
// (distinct settings), against `budget` where one is given, with no bar or ETA.
std::unique_ptr<ProgressReporter> make_text_progress_reporter(std::function<void(const std::string&)> write,
                                                              bool redraw_in_place,
                                                              SearchProgressBudget budget = {});
std::unique_ptr<ProgressReporter> make_silent_progress_reporter();

struct SweepOptions {
  bool allow_clock_changes = false;
  Shard shard;
  bool resume = false;              // continue the newest unfinished run of this plan on this GPU
  std::filesystem::path state_dir;  // ClockGuard journal and lock; empty = default
  WorkloadOptions workload_options;
};

// One GPU's share of a run on several GPUs.
struct SweepGpuEnergy {
  std::string uuid;
  int index = 0;     // the GPU's index among its backend's GPUs
  std::string name;  // "NVIDIA H200"
  // Over every window this run measured (not those a resumed run held already);
  // absent when a window had no energy for this GPU.
  std::optional<double> energy_j;
};

struct SweepResult {
  std::int64_t run_id = 0;
  bool resumed = false;
  std::size_t points_measured = 0;
  std::size_t points_skipped = 0;    // finished before a resume
  std::size_t measurements = 0;      // windows recorded now (repetitions included)
  std::size_t clock_mismatches = 0;  // points whose effective clock differed from the request
  // Of those, the points with no power or thermal limit to explain it: the GPU did not
  // apply the setting (MeasurementFlags::setting_not_applied).
  std::size_t settings_not_applied = 0;
  // Energy per item of the drift reference (first case, default setting), last
  // against first check, in %; absent with fewer than two checks.
  std::optional<double> drift_pct;
  double gpu_seconds = 0;  // on the GPU's clock (virtual for simulated GPUs)
  // Each GPU's energy, in the job's order, when the run metered several; empty for one.
  std::vector<SweepGpuEnergy> gpus;
};

// Expands the plan for `gpu` and checks the settings against it (supported clocks,
// power range) and that every workload exists for it; throws ConfigError. Touches
// nothing: a dry run stops here. run_sweep also checks, before anything runs, that
// clock changes are allowed (--allow-clock-changes, the GPU's read-only mode).
Schedule prepare_sweep(Gpu& gpu, const Plan& plan, const WorkloadRegistry& registry,
                       const SweepOptions& options);

// The iteration times of every case × setting of `schedule` for a dry run's
// estimate (estimate_duration), rehearsed with the plan's warm-up iterations on a
// fresh instance of `gpu` when its time is virtual (simulated, replayed, twin): the
// GPU itself is not touched. Knows nothing for a real GPU, whose iterations only a
// measurement can time.
IterationSeconds rehearse_iterations(const Gpu& gpu, const Schedule& schedule, const MeasurePolicy& policy,
                                     const WorkloadOptions& workload_options = {});

// Whether this sweep may change clocks: allow_clock_changes was given, or the GPU is
// simulated (nothing real changes). Read-only mode refuses changes even then.
bool clock_changes_allowed(const Gpu& gpu, const SweepOptions& options);
// Refuses (PermissionError) a schedule with clock changes that are not allowed, or
// any clock change in read-only mode; a default-only schedule always passes.
void check_sweep_allowed(const Gpu& gpu, const Schedule& schedule, const SweepOptions& options);

// Measures the plan on `gpu` and stores every measurement in `store`. Refuses
// clock changes that are not allowed before anything runs. The GPU is restored to
// the state found on return and exception; on SIGINT and SIGTERM where the host
// handles them (the CLI's handler, or an InterruptScope: then InterruptedError).
SweepResult run_sweep(Gpu& gpu, const Plan& plan, const WorkloadRegistry& registry, Store& store,
                      const SweepOptions& options, ProgressReporter& progress);
// The same, measuring the points `strategy` proposes instead of the plan's grid
// (any setting of the plan's knobs, checked like the grid's before anything runs).
SweepResult run_sweep(Gpu& gpu, const Plan& plan, const WorkloadRegistry& registry, Store& store,
                      const SweepOptions& options, ProgressReporter& progress, SearchStrategy& strategy);

// Both of the above for a job on several GPUs of one node (docs/multi-gpu.md): each
// setting is put on every GPU together (ClockGuardSet), one meter meters them all
// (each Measurement holds the job's totals and, in `gpus`, each GPU's share), and
// strategies see the job's energy per item and time. The plan is checked against
// every GPU; the first GPU's tables give the settings, its identity is the run's,
// and built-in workloads run on it (a command loads whichever GPUs it uses). One GPU
// is exactly the calls above.
SweepResult run_sweep(std::span<Gpu* const> gpus, const Plan& plan, const WorkloadRegistry& registry,
                      Store& store, const SweepOptions& options, ProgressReporter& progress);
SweepResult run_sweep(std::span<Gpu* const> gpus, const Plan& plan, const WorkloadRegistry& registry,
                      Store& store, const SweepOptions& options, ProgressReporter& progress,
                      SearchStrategy& strategy);

}  // namespace dvfslab
