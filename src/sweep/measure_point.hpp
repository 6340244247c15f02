#pragma once
// Measuring one point of a sweep: apply its setting through the JobGuard, settle,
// warm the workload up (unless the point continues the one just measured), measure
// windows until the stop rule is met and store each at once. The runner calls it for
// every point a SearchStrategy proposes.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "dvfslab/guard.hpp"
#include "dvfslab/meter.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/sweep.hpp"
#include "dvfslab/workload.hpp"
#include "sweep/job_guard.hpp"
#include "sweep/window.hpp"

namespace dvfslab::sweep_detail {

// Keeps the workload of the current case and of the drift reference prepared, and
// no others (a LibTorch model holds GPU memory).
class WorkloadCache {
 public:
  WorkloadCache(const WorkloadRegistry& registry, Gpu& gpu, const WorkloadOptions& options, Case keep)
      : registry_(registry), gpu_(gpu), options_(options), keep_(std::move(keep)) {}
  Workload& get(const Case& workload_case);

 private:
  const WorkloadRegistry& registry_;
  Gpu& gpu_;
  const WorkloadOptions& options_;
  Case keep_;
  std::map<Case, std::unique_ptr<Workload>> workloads_;
};

// Everything measuring a point needs, owned by the runner for one run.
struct PointContext {
  Gpu& gpu;  // the job's first GPU: its clock times the windows
  JobGuard& guard;
  EnergyMeter& meter;
  Store& store;
  std::int64_t run_id;
  const MeasurePolicy& policy;
  const StopRule& stop_rule;
  double window_s;
  WorkloadCache& workloads;
};

class PointMeasurer {
 public:
  explicit PointMeasurer(PointContext context) : context_(context) {}

  // Measures `point`: a grid point gets more repetitions while the stop rule asks,
  // after those in `series` (a resumed run's stored ones); a drift point gets one.
  // Appends each repetition's energy per item to `series` and its throughput to
  // `throughput`. Throws InterruptedError once an interrupt restored the GPU, before
  // storing a window measured after it.
  PointOutcome measure_point(const ScheduledPoint& point, std::vector<double>& series,
                             std::vector<double>& throughput);

  // Each GPU's energy over the windows measured so far, when the meter meters
  // several GPUs; empty for one.
  const std::vector<SweepGpuEnergy>& gpu_energy() const { return gpu_energy_; }

 private:
  void apply(const Setting& setting);
  void add_gpu_energy(const Measurement& m);

  PointContext context_;
  std::map<Case, IterationPace> paces_;
  std::optional<Setting> applied_;
  EffectiveSetting effective_;
  // The case and setting whose windows ended last, unless anything ran since.
  std::optional<std::pair<Case, Setting>> last_measured_;
  std::vector<SweepGpuEnergy> gpu_energy_;
};

}  // namespace dvfslab::sweep_detail
