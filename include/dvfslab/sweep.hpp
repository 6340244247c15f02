#pragma once
// Running a plan: every scheduled point measured on one GPU under a ClockGuard,
// each measurement committed to the store at once, resumable after a crash.
//
//   Plan plan = load_plan_file("plan.toml");
//   Store store("dvfslab.sqlite");
//   auto progress = make_progress_reporter(stderr);
//   SweepResult result = run_sweep(gpu, plan, registry, store, options, *progress);
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/types.hpp"
#include "dvfslab/workload.hpp"

namespace dvfslab {

class Store;

// The stop rule: true while fewer than the minimum repetitions were measured, or
// the 95 % confidence half-width of energy per item is above the target and the
// maximum is not reached. A target needs two repetitions to judge.
bool needs_another_repetition(const MeasurePolicy& policy, std::span<const double> energy_per_item_j);

// What one point gave, for progress reports.
struct PointOutcome {
  ScheduledPoint point;
  int repetitions = 0;               // measured now (0: skipped, already in the store)
  std::optional<double> energy_per_item_j;
  std::optional<double> items_per_s;
  std::optional<double> mean_power_w;
  std::string item_unit;
  MeasurementFlags flags;            // any repetition's
};

class ProgressReporter {
 public:
  virtual ~ProgressReporter() = default;
  virtual void start(const Schedule& schedule, const GpuIdentity& gpu, std::size_t already_done) = 0;
  // Called after each point; `done` counts the points finished so far (skipped ones too).
  virtual void point_done(const PointOutcome& outcome, std::size_t done, std::size_t total) = 0;
  virtual void finish() = 0;
};

// A bar with an ETA redrawn in place when `stream` is a terminal; one plain line per
// point otherwise.
std::unique_ptr<ProgressReporter> make_progress_reporter(std::FILE* stream);
// Always one plain line per point (tests, logs).
std::unique_ptr<ProgressReporter> make_line_progress_reporter(std::FILE* stream);
std::unique_ptr<ProgressReporter> make_silent_progress_reporter();

struct SweepOptions {
  bool allow_clock_changes = false;
  Shard shard;
  bool resume = false;                  // continue the newest unfinished run of this plan on this GPU
  std::filesystem::path state_dir;      // ClockGuard journal and lock; empty = default
  WorkloadOptions workload_options;
};

struct SweepResult {
  std::int64_t run_id = 0;
  bool resumed = false;
  std::size_t points_measured = 0;
  std::size_t points_skipped = 0;       // finished before a resume
  std::size_t measurements = 0;         // windows recorded now (repetitions included)
  std::size_t clock_mismatches = 0;     // points whose effective clock differed from the request
  // Energy per item of the drift reference (first case, default setting), last
  // against first check, in %; absent with fewer than two checks.
  std::optional<double> drift_pct;
  double gpu_seconds = 0;               // on the GPU's clock (virtual for simulated GPUs)
};

// Expands the plan for `gpu` and checks the settings against it (supported clocks,
// power range) and that every workload exists for it; throws ConfigError. Touches
// nothing: a dry run stops here. run_sweep also checks, before anything runs, that
// clock changes are allowed (--allow-clock-changes, DVFSLAB_READ_ONLY).
Schedule prepare_sweep(Gpu& gpu, const Plan& plan, const WorkloadRegistry& registry, const SweepOptions& options);

// Whether this sweep may change clocks: allow_clock_changes was given, or the GPU is
// simulated (nothing real changes). DVFSLAB_READ_ONLY refuses changes even then.
bool clock_changes_allowed(const Gpu& gpu, const SweepOptions& options);
// Refuses (PermissionError) a schedule with clock changes that are not allowed, or
// any clock change under DVFSLAB_READ_ONLY; a default-only schedule always passes.
void check_sweep_allowed(const Gpu& gpu, const Schedule& schedule, const SweepOptions& options);

// Measures the plan on `gpu` and stores every measurement in `store`. Refuses
// clock changes that are not allowed before anything runs. The GPU is restored to
// the state found on return, exception, SIGINT and SIGTERM.
SweepResult run_sweep(Gpu& gpu, const Plan& plan, const WorkloadRegistry& registry, Store& store,
                      const SweepOptions& options, ProgressReporter& progress);

// Test hook: with DVFSLAB_TEST_KILL_AFTER_POINTS=N set, run_sweep sends itself
// SIGKILL after recording its N-th point, so tests can interrupt a sweep at an
// exact place. Returns N, or absent when the variable is unset.
std::optional<long> test_kill_after_points();

}  // namespace dvfslab
