// The sweep runner: asks the search strategy for points, measures each
// (sweep/measure_point.hpp) on one GPU or on every GPU of a job, and records the
// run in the store, resumable after a crash.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/job_stage.hpp"
#include "dvfslab/meter.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/sweep.hpp"
#include "sweep/job_guard.hpp"
#include "sweep/measure_point.hpp"

namespace dvfslab {
namespace {

using CaseSetting = std::pair<Case, Setting>;

// The grid windows a resumed run already holds for one case and setting, in
// measuring order: a strategy continuing the run needs what the uninterrupted run
// would have handed it (a model is fitted to throughput and power, not energy alone).
struct StoredWindows {
  std::vector<double> energy_per_item_j;
  std::vector<double> items_per_s;
  std::vector<double> mean_power_w;
  std::vector<double> sm_mhz, mem_mhz;  // the windows' mean clocks
  MeasurementFlags flags;               // any window's: a setting not applied stays untrusted
};

std::map<CaseSetting, StoredWindows> stored_windows(Store& store, std::int64_t run_id) {
  std::map<CaseSetting, StoredWindows> stored;
  for (const auto& row : store.measurements()) {
    if (row.run_id != run_id || row.point.role != RecordRole::grid) continue;
    auto& windows = stored[{row.point.point.workload_case, row.point.point.setting}];
    const Measurement& m = row.measurement;
    windows.energy_per_item_j.push_back(m.energy_j && m.items > 0 ? *m.energy_j / m.items : 0.0);
    if (m.duration_s > 0) windows.items_per_s.push_back(m.items / m.duration_s);
    if (m.mean_power_w) windows.mean_power_w.push_back(*m.mean_power_w);
    // A job's mean over several GPUs could match another setting's by chance.
    if (m.sm_mhz_mean && m.gpus.empty()) windows.sm_mhz.push_back(*m.sm_mhz_mean);
    if (m.mem_mhz_mean && m.gpus.empty()) windows.mem_mhz.push_back(*m.mem_mhz_mean);
    windows.flags |= m.flags;
  }
  return stored;
}

// A point the resumed run holds, handed back as if measured now.
PointOutcome stored_outcome(const ScheduledPoint& point, const StoredWindows& stored) {
  PointOutcome outcome;
  outcome.point = point;
  outcome.energy_per_item_j_series = stored.energy_per_item_j;
  outcome.items_per_s_series = stored.items_per_s;
  if (!stored.energy_per_item_j.empty()) outcome.energy_per_item_j = stored.energy_per_item_j.back();
  if (!stored.items_per_s.empty()) outcome.items_per_s = stored.items_per_s.back();
  outcome.flags = stored.flags;
  const auto mean = [](const std::vector<double>& values) -> std::optional<double> {
    if (values.empty()) return std::nullopt;
    return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  };
  outcome.mean_power_w = mean(stored.mean_power_w);
  outcome.sm_mhz_mean = mean(stored.sm_mhz);
  outcome.mem_mhz_mean = mean(stored.mem_mhz);
  return outcome;
}

SearchSpace search_space(Gpu& gpu, const Plan& plan, const SweepOptions& options) {
  SearchSpace space;
  space.cases = expand_cases(plan);
  space.settings = plan_settings(plan.knobs, gpu);
  space.policy = plan.measure;
  space.shard = options.shard;
  return space;
}

}  // namespace

bool clock_changes_allowed(const Gpu& gpu, const SweepOptions& options) {
  return options.allow_clock_changes || !gpu.persists_settings();
}

void check_sweep_allowed(const Gpu& gpu, const Schedule& schedule, const SweepOptions& options) {
  std::vector<Setting> used;
  for (const auto& point : schedule.points) used.push_back(point.setting);
  check_clock_changes_allowed(used, clock_changes_allowed(gpu, options), gpu.read_only());
}

Schedule prepare_sweep(Gpu& gpu, const Plan& plan, const WorkloadRegistry& registry,
                       const SweepOptions& options) {
  const auto& identity = gpu.identity();
  const auto clocks = gpu.clock_table();
  const auto limits = gpu.power_limits();
  const auto settings = plan_settings(plan.knobs, gpu);
  Schedule schedule = make_schedule(plan, settings, options.shard);
  for (const auto& setting : settings) validate_setting(identity.name, clocks, limits, setting);

  std::set<std::string> available;
  for (const auto& info : registry.list(&gpu)) available.insert(info.name);
  for (const auto& workload_case : expand_cases(plan)) {
    if (!available.count(workload_case.workload)) {
      throw ConfigError(
          plan.source_name,
          fmt::format("unknown workload '{}' for {}: choose one of {}", workload_case.workload, identity.name,
                      available.empty() ? std::string("(none available)")
                                        : fmt::format("{}", fmt::join(available, ", "))));
    }
  }
  return schedule;
}

namespace {

// What the run holds per grid point: the windows measured so far (a resumed run's
// stored ones first) and which points were proposed already.
class RunHistory {
 public:
  explicit RunHistory(const StopRule& stop_rule) : stop_rule_(stop_rule) {}

  void load(Store& store, std::int64_t run_id) {
    for (auto& [key, windows] : stored_windows(store, run_id)) {
      repetitions_[key] = windows.energy_per_item_j;
      throughputs_[key] = windows.items_per_s;
      stored_.emplace(key, std::move(windows));
    }
  }

  bool finished_before(const ScheduledPoint& point) const {
    if (point.role != PointRole::grid) return false;
    const auto it = repetitions_.find({point.workload_case, point.setting});
    if (it == repetitions_.end()) return false;
    return point.windows > 0 ? std::ssize(it->second) >= point.windows
                             : !stop_rule_.needs_another_repetition(it->second);
  }

  std::size_t count_finished(const Schedule& schedule) const {
    std::size_t finished = 0;
    for (const auto& point : schedule.points) finished += finished_before(point) ? 1 : 0;
    return finished;
  }

  // A point proposed again in this run is measured again (a search settling a
  // comparison); only its first proposal may reuse what a resumed run holds.
  bool reusable(const ScheduledPoint& point) {
    const bool first_proposal =
        point.role != PointRole::grid || proposed_.insert({point.workload_case, point.setting}).second;
    return first_proposal && finished_before(point);
  }

  PointOutcome reused(const ScheduledPoint& point) {
    return stored_outcome(point, stored_[{point.workload_case, point.setting}]);
  }
  std::vector<double>& energy_series(const ScheduledPoint& point) {
    return repetitions_[{point.workload_case, point.setting}];
  }
  // Items per second, of the same windows as energy_series().
  std::vector<double>& throughput_series(const ScheduledPoint& point) {
    return throughputs_[{point.workload_case, point.setting}];
  }

 private:
  const StopRule& stop_rule_;
  std::map<CaseSetting, std::vector<double>> repetitions_;
  std::map<CaseSetting, std::vector<double>> throughputs_;
  std::map<CaseSetting, StoredWindows> stored_;  // what a resumed run held
  std::set<CaseSetting> proposed_;
};

// The energy per item of the run's drift points, first against last.
class DriftTracker {
 public:
  void record(const ScheduledPoint& point, const std::vector<double>& series) {
    if (point.role == PointRole::drift && !series.empty()) energies_.push_back(series.front());
  }
  std::optional<double> percent() const {
    if (energies_.size() < 2 || !(energies_.front() > 0)) return std::nullopt;
    return 100.0 * (energies_.back() / energies_.front() - 1.0);
  }

 private:
  std::vector<double> energies_;
};

// The first GPU's settings, which the job puts on every GPU, checked against another's tables.
void validate_settings_on(Gpu& gpu, std::span<const Setting> settings) {
  const ClockTable clocks = gpu.clock_table();
  const PowerLimits limits = gpu.power_limits();
  for (const Setting& setting : settings) {
    if (!setting.is_default()) validate_setting(gpu.identity().name, clocks, limits, setting);
  }
}

// Checks the plan against every GPU of the job and what the options allow, before
// anything runs; the settings are those of gpus[reference] (the first GPU, or a
// per-GPU stage's varied one, whose settings the others then never take).
// `any_setting`: the strategy may choose any setting of the plan's knobs (not only
// this shard's grid), so all of them are checked.
SearchSpace checked_search_space(std::span<Gpu* const> gpus, const Plan& plan,
                                 const WorkloadRegistry& registry, const SweepOptions& options,
                                 bool any_setting, const JobStage* stage) {
  const std::size_t reference = stage ? stage->varied : 0;
  SearchSpace space;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    Gpu& gpu = *gpus[i];
    const Schedule grid_schedule = prepare_sweep(gpu, plan, registry, options);
    if (i == reference) {
      space = search_space(gpu, plan, options);
    } else if (!stage) {
      validate_settings_on(gpu, space.settings);
    }
    check_sweep_allowed(gpu, grid_schedule, options);
    if (any_setting)
      check_clock_changes_allowed(space.settings, clock_changes_allowed(gpu, options), gpu.read_only());
  }
  return space;
}

// The run's plan text: the plan's own, and for a job on several GPUs a comment naming
// them all, so that --resume never continues a run of another set of GPUs (the run's
// GPU is the first one's).
std::string recorded_plan_text(std::span<Gpu* const> gpus, const Plan& plan) {
  if (gpus.size() == 1) return plan.source_text;
  std::vector<std::string> uuids;
  for (const Gpu* gpu : gpus) uuids.push_back(gpu->identity().uuid);
  return fmt::format("{}\n# dvfslab: one job on {} GPUs: {}\n", plan.source_text, gpus.size(),
                     fmt::join(uuids, ", "));
}

// A per-GPU stage's comment, after the job's: which GPU it varies and what every
// other one held, so that the stored run says what its probes ran beside.
std::string stage_comment(std::span<Gpu* const> gpus, const JobStage& stage) {
  std::vector<std::string> held;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (i != stage.varied)
      held.push_back(fmt::format("{} {}", gpus[i]->identity().uuid, to_string(stage.held[i])));
  }
  return fmt::format("# dvfslab: per-GPU search stage {} of {}: varies {}; the others held {}\n",
                     stage.number, stage.count, gpus[stage.varied]->identity().uuid, fmt::join(held, ", "));
}

// Begins the run, or with `resume` reopens the unfinished one of this plan, GPUs
// and shard and loads what it holds into `history`.
void open_run(std::span<Gpu* const> gpus, const Plan& plan, Store& store, const SweepOptions& options,
              const JobStage* stage, RunHistory& history, SweepResult& result) {
  RunInfo info;
  info.gpu = gpus[stage ? stage->varied : 0]->identity();
  info.plan_text = recorded_plan_text(gpus, plan);
  if (stage) info.plan_text += stage_comment(gpus, *stage);
  info.plan_hash = plan_hash(info.plan_text);
  info.shard_index = options.shard.index;
  info.shard_count = options.shard.count;
  std::optional<RunInfo> unfinished;
  if (options.resume) {
    unfinished = store.find_unfinished_run(info.plan_hash, info.gpu.uuid, info.shard_index, info.shard_count);
  }
  if (!unfinished) {
    result.run_id = store.begin_run(info);
    return;
  }
  result.run_id = unfinished->id;
  result.resumed = true;
  store.reopen_run(result.run_id);
  history.load(store, result.run_id);
}

// What the proposal loop works with, for one run.
struct ProposalLoop {
  SearchStrategy& strategy;
  const SearchSpace& space;
  const Schedule& planned;
  RunHistory& history;
  sweep_detail::PointMeasurer& measurer;
  DriftTracker& drift;
  ProgressReporter& progress;
  SweepResult& result;
};

PointOutcome measure_new_point(const ScheduledPoint& point, ProposalLoop& loop) {
  std::vector<double> drift_energy;
  std::vector<double> drift_throughput;
  const bool grid = point.role == PointRole::grid;
  auto& series = grid ? loop.history.energy_series(point) : drift_energy;
  auto& throughput = grid ? loop.history.throughput_series(point) : drift_throughput;
  PointOutcome outcome = loop.measurer.measure_point(point, series, throughput);
  loop.drift.record(point, series);
  loop.result.measurements += static_cast<std::size_t>(outcome.repetitions);
  loop.result.clock_mismatches += outcome.flags.clock_mismatch ? 1 : 0;
  loop.result.settings_not_applied += outcome.flags.setting_not_applied() ? 1 : 0;
  ++loop.result.points_measured;
  return outcome;
}

// Measures, or takes from the resumed run, every point the strategy proposes until
// it proposes none.
void run_proposals(ProposalLoop& loop) {
  std::vector<PointOutcome> outcomes;
  int sequence = 0;
  for (auto batch = loop.strategy.propose(loop.space, outcomes); !batch.empty();
       batch = loop.strategy.propose(loop.space, outcomes)) {
    for (ScheduledPoint point : batch) {
      point.sequence = sequence++;
      PointOutcome outcome;
      if (loop.history.reusable(point)) {
        outcome = loop.history.reused(point);
        ++loop.result.points_skipped;
      } else {
        outcome = measure_new_point(point, loop);
      }
      outcomes.push_back(outcome);
      loop.progress.point_done(outcome, outcomes.size(),
                               std::max(loop.planned.points.size(), outcomes.size()));
    }
  }
}

// Runs the proposal loop and records how the run ended: finished once the GPU is
// restored, else interrupted or failed (the exception goes on).
void run_recorded(ProposalLoop& loop, Store& store, sweep_detail::JobGuard& guard,
                  const GpuIdentity& identity, std::optional<InterruptAction>& record_interruption) {
  const std::int64_t run_id = loop.result.run_id;
  try {
    loop.progress.start(loop.planned, identity, loop.history.count_finished(loop.planned));
    run_proposals(loop);
    guard.restore();
    record_interruption.reset();
    store.finish_run(run_id, RunStatus::finished);
    loop.progress.finish();
  } catch (const InterruptedError&) {
    loop.progress.finish();
    record_interruption.reset();
    store.finish_run(run_id, RunStatus::interrupted);
    throw;
  } catch (...) {
    loop.progress.finish();
    record_interruption.reset();
    // An error the interruption caused (its workload's program stopped) is the interruption.
    store.finish_run(run_id, guard.interrupted() ? RunStatus::interrupted : RunStatus::failed);
    throw;
  }
}

// Clock changes are allowed on the job when they are on each of its GPUs.
bool job_clock_changes_allowed(std::span<Gpu* const> gpus, const SweepOptions& options) {
  return std::all_of(gpus.begin(), gpus.end(),
                     [&options](const Gpu* gpu) { return clock_changes_allowed(*gpu, options); });
}

SweepResult sweep(std::span<Gpu* const> gpus, const Plan& plan, const WorkloadRegistry& registry,
                  Store& store, const SweepOptions& options, ProgressReporter& progress,
                  SearchStrategy& strategy, bool any_setting, const JobStage* stage = nullptr) {
  if (gpus.empty()) throw UsageError("a sweep needs at least one GPU");
  Gpu& gpu = *gpus.front();
  const SearchSpace space = checked_search_space(gpus, plan, registry, options, any_setting, stage);
  const MeasurePolicy& policy = plan.measure;
  const StopRule stop_rule = make_stop_rule(policy);
  // The guard takes the GPUs' locks before the run is recorded, so a busy GPU
  // leaves no trace in the store.
  // (A per-GPU stage's are the caller's, taken before its first stage.)
  sweep_detail::JobGuard guard =
      stage ? sweep_detail::JobGuard(*stage)
            : sweep_detail::JobGuard(
                  gpus, GuardOptions{options.state_dir, job_clock_changes_allowed(gpus, options)});
  SweepResult result;
  RunHistory history(stop_rule);
  open_run(gpus, plan, store, options, stage, history, result);
  // A signal may end the process before this thread gets to the catch in
  // run_recorded (the program's handler exits): the signal thread records the
  // interruption itself, through a connection of its own, since this one may be
  // inside a transaction. Once this thread records how the run ended, a late signal
  // changes nothing.
  std::optional<InterruptAction> record_interruption(
      std::in_place, [database = store.path(), run_id = result.run_id](int) {
        Store(database).finish_run(run_id, RunStatus::interrupted);
      });
  const Schedule planned = strategy.planned(space);

  Clock& clock = gpu.clock();
  const double started_at = clock.now_s();
  EnergyMeter meter(std::vector<Gpu*>(gpus.begin(), gpus.end()));
  meter.start();
  const double window_s = policy.resolved_duration_s(meter.sensor_period_s());
  // The drift reference's workload stays prepared (the first point's case, as planned).
  const Case drift_case = planned.points.empty() ? space.cases.front() : planned.points.front().workload_case;
  sweep_detail::WorkloadCache workloads(registry, gpu, options.workload_options, drift_case);
  sweep_detail::PointMeasurer measurer(
      {gpu, guard, meter, store, result.run_id, policy, stop_rule, window_s, workloads});
  DriftTracker drift;
  ProposalLoop loop{strategy, space, planned, history, measurer, drift, progress, result};
  run_recorded(loop, store, guard, gpus[stage ? stage->varied : 0]->identity(), record_interruption);
  meter.stop();
  result.drift_pct = drift.percent();
  result.gpu_seconds = clock.now_s() - started_at;
  result.gpus = measurer.gpu_energy();
  return result;
}

}  // namespace

SweepResult run_sweep(std::span<Gpu* const> gpus, const Plan& plan, const WorkloadRegistry& registry,
                      Store& store, const SweepOptions& options, ProgressReporter& progress) {
  const auto grid = make_grid_strategy();
  return sweep(gpus, plan, registry, store, options, progress, *grid, false);
}

SweepResult run_sweep(std::span<Gpu* const> gpus, const Plan& plan, const WorkloadRegistry& registry,
                      Store& store, const SweepOptions& options, ProgressReporter& progress,
                      SearchStrategy& strategy) {
  return sweep(gpus, plan, registry, store, options, progress, strategy, true);
}

SweepResult run_search_stage(std::span<Gpu* const> gpus, const Plan& plan, const WorkloadRegistry& registry,
                             Store& store, const SweepOptions& options, ProgressReporter& progress,
                             SearchStrategy& strategy, const JobStage& stage) {
  if (options.resume) throw UsageError("a per-GPU search stage cannot resume a run");
  return sweep(gpus, plan, registry, store, options, progress, strategy, true, &stage);
}

SweepResult run_sweep(Gpu& gpu, const Plan& plan, const WorkloadRegistry& registry, Store& store,
                      const SweepOptions& options, ProgressReporter& progress) {
  Gpu* const one[] = {&gpu};
  return run_sweep(one, plan, registry, store, options, progress);
}

SweepResult run_sweep(Gpu& gpu, const Plan& plan, const WorkloadRegistry& registry, Store& store,
                      const SweepOptions& options, ProgressReporter& progress, SearchStrategy& strategy) {
  Gpu* const one[] = {&gpu};
  return run_sweep(one, plan, registry, store, options, progress, strategy);
}

}  // namespace dvfslab
