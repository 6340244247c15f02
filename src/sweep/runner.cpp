// The sweep runner: asks the search strategy for points, measures each
// (sweep/measure_point.hpp) and records the run in the store, resumable after a
// crash.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/meter.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/sweep.hpp"
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
  if (!stored.mean_power_w.empty()) {
    outcome.mean_power_w = std::accumulate(stored.mean_power_w.begin(), stored.mean_power_w.end(), 0.0) /
                           static_cast<double>(stored.mean_power_w.size());
  }
  return outcome;
}

SearchSpace search_space(Gpu& gpu, const Plan& plan, const SweepOptions& options) {
  SearchSpace space;
  space.cases = expand_cases(plan);
  space.settings = expand_settings(plan.knobs, gpu.clock_table(), gpu.power_limits(), gpu.identity().name);
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
  const auto settings = expand_settings(plan.knobs, clocks, limits, identity.name);
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

// `any_setting`: the strategy may choose any setting of the plan's knobs (not only
// this shard's grid), so all of them are checked before anything runs.
SweepResult sweep(Gpu& gpu, const Plan& plan, const WorkloadRegistry& registry, Store& store,
                  const SweepOptions& options, ProgressReporter& progress, SearchStrategy& strategy,
                  bool any_setting) {
  const Schedule grid_schedule = prepare_sweep(gpu, plan, registry, options);
  const SearchSpace space = search_space(gpu, plan, options);
  check_sweep_allowed(gpu, grid_schedule, options);
  if (any_setting)
    check_clock_changes_allowed(space.settings, clock_changes_allowed(gpu, options), gpu.read_only());
  const MeasurePolicy& policy = plan.measure;
  const StopRule stop_rule = make_stop_rule(policy);
  // The guard takes the GPU's lock before the run is recorded, so a busy GPU
  // leaves no trace in the store.
  ClockGuard guard(gpu, GuardOptions{options.state_dir, clock_changes_allowed(gpu, options)});

  SweepResult result;
  RunInfo info;
  info.gpu = gpu.identity();
  info.plan_text = plan.source_text;
  info.plan_hash = plan_hash(plan.source_text);
  info.shard_index = options.shard.index;
  info.shard_count = options.shard.count;
  std::map<CaseSetting, std::vector<double>> repetitions;
  std::map<CaseSetting, std::vector<double>> throughputs;  // items per second, the same windows
  std::map<CaseSetting, StoredWindows> stored;             // what a resumed run held
  std::optional<RunInfo> unfinished;
  if (options.resume) {
    unfinished = store.find_unfinished_run(info.plan_hash, info.gpu.uuid, info.shard_index, info.shard_count);
  }
  if (unfinished) {
    result.run_id = unfinished->id;
    result.resumed = true;
    store.reopen_run(result.run_id);
    for (auto& [key, windows] : stored_windows(store, result.run_id)) {
      repetitions[key] = windows.energy_per_item_j;
      throughputs[key] = windows.items_per_s;
      stored.emplace(key, std::move(windows));
    }
  } else {
    result.run_id = store.begin_run(info);
  }
  // A signal may end the process before this thread gets to the catch below (the
  // program's handler exits): the signal thread records the interruption itself,
  // through a connection of its own, since this one may be inside a transaction.
  // Once this thread records how the run ended, a late signal changes nothing.
  std::optional<InterruptAction> record_interruption(
      std::in_place, [database = store.path(), run_id = result.run_id](int) {
        Store(database).finish_run(run_id, RunStatus::interrupted);
      });

  const auto finished_before = [&](const ScheduledPoint& point) {
    if (point.role != PointRole::grid) return false;
    const auto it = repetitions.find({point.workload_case, point.setting});
    if (it == repetitions.end()) return false;
    return point.windows > 0 ? std::ssize(it->second) >= point.windows
                             : !stop_rule.needs_another_repetition(it->second);
  };
  // A point proposed again in this run is measured again (a search settling a
  // comparison); only its first proposal may reuse what a resumed run holds.
  std::set<CaseSetting> proposed;
  const Schedule planned = strategy.planned(space);
  std::size_t already_done = 0;
  for (const auto& point : planned.points) already_done += finished_before(point) ? 1 : 0;

  Clock& clock = gpu.clock();
  const double started_at = clock.now_s();
  EnergyMeter meter(gpu);
  meter.start();
  const double window_s = policy.resolved_duration_s(meter.sensor_period_s());
  // The drift reference's workload stays prepared (the first point's case, as planned).
  const Case drift_case = planned.points.empty() ? space.cases.front() : planned.points.front().workload_case;
  sweep_detail::WorkloadCache workloads(registry, gpu, options.workload_options, drift_case);
  sweep_detail::PointMeasurer measurer(
      {gpu, guard, meter, store, result.run_id, policy, stop_rule, window_s, workloads});
  std::vector<PointOutcome> outcomes;
  std::vector<double> drift_energies;
  int sequence = 0;

  try {
    progress.start(planned, gpu.identity(), already_done);
    for (auto batch = strategy.propose(space, outcomes); !batch.empty();
         batch = strategy.propose(space, outcomes)) {
      for (ScheduledPoint point : batch) {
        point.sequence = sequence++;
        PointOutcome outcome;
        outcome.point = point;
        const bool first_proposal =
            point.role != PointRole::grid || proposed.insert({point.workload_case, point.setting}).second;
        if (first_proposal && finished_before(point)) {
          outcome = stored_outcome(point, stored[{point.workload_case, point.setting}]);
          ++result.points_skipped;
        } else {
          std::vector<double> drift_energy;
          std::vector<double> drift_throughput;
          const bool grid = point.role == PointRole::grid;
          auto& series = grid ? repetitions[{point.workload_case, point.setting}] : drift_energy;
          auto& throughput = grid ? throughputs[{point.workload_case, point.setting}] : drift_throughput;
          outcome = measurer.measure_point(point, series, throughput);
          if (point.role == PointRole::drift && !series.empty()) drift_energies.push_back(series.front());
          result.measurements += static_cast<std::size_t>(outcome.repetitions);
          result.clock_mismatches += outcome.flags.clock_mismatch ? 1 : 0;
          ++result.points_measured;
        }
        outcomes.push_back(outcome);
        progress.point_done(outcome, outcomes.size(), std::max(planned.points.size(), outcomes.size()));
      }
    }
    guard.restore();
    record_interruption.reset();
    store.finish_run(result.run_id, RunStatus::finished);
    progress.finish();
  } catch (const InterruptedError&) {
    progress.finish();
    record_interruption.reset();
    store.finish_run(result.run_id, RunStatus::interrupted);
    throw;
  } catch (...) {
    progress.finish();
    record_interruption.reset();
    // An error the interruption caused (its workload's program stopped) is the interruption.
    store.finish_run(result.run_id, guard.interrupted() ? RunStatus::interrupted : RunStatus::failed);
    throw;
  }
  meter.stop();
  if (drift_energies.size() >= 2 && drift_energies.front() > 0) {
    result.drift_pct = 100.0 * (drift_energies.back() / drift_energies.front() - 1.0);
  }
  result.gpu_seconds = clock.now_s() - started_at;
  return result;
}

}  // namespace

SweepResult run_sweep(Gpu& gpu, const Plan& plan, const WorkloadRegistry& registry, Store& store,
                      const SweepOptions& options, ProgressReporter& progress) {
  const auto grid = make_grid_strategy();
  return sweep(gpu, plan, registry, store, options, progress, *grid, false);
}

SweepResult run_sweep(Gpu& gpu, const Plan& plan, const WorkloadRegistry& registry, Store& store,
                      const SweepOptions& options, ProgressReporter& progress, SearchStrategy& strategy) {
  return sweep(gpu, plan, registry, store, options, progress, strategy, true);
}

}  // namespace dvfslab
