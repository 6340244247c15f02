// The sweep runner: per scheduled point, the ClockGuard applies the setting, the
// workload warms up, the EnergyMeter measures repetitions until the stop rule is
// met, and every window is committed to the store at once.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <csignal>
#include <cstdlib>
#include <map>
#include <set>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/meter.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/sweep.hpp"
#include "sweep/window.hpp"

namespace dvfslab {
namespace {

using sweep_detail::IterationPace;
using CaseSetting = std::pair<Case, Setting>;

std::optional<double> energy_per_item(const Measurement& m) {
  if (!m.energy_j || m.items <= 0) return std::nullopt;
  return *m.energy_j / m.items;
}

// The requested clock was not what the GPU ran at (under load, over the window);
// 1 % or 15 MHz of slack allows for clock-table rounding.
bool differs(std::optional<int> requested, std::optional<double> measured) {
  if (!requested || !measured) return false;
  return std::abs(*measured - *requested) > std::max(15.0, 0.01 * *requested);
}

// Keeps the workload of the current case and of the drift reference prepared, and
// no others (a LibTorch model holds GPU memory).
class WorkloadCache {
 public:
  WorkloadCache(const WorkloadRegistry& registry, Gpu& gpu, const WorkloadOptions& options, Case keep)
      : registry_(registry), gpu_(gpu), options_(options), keep_(std::move(keep)) {}

  Workload& get(const Case& workload_case) {
    for (auto it = workloads_.begin(); it != workloads_.end();) {
      it = (it->first == workload_case || it->first == keep_) ? std::next(it) : workloads_.erase(it);
    }
    auto& slot = workloads_[workload_case];
    if (!slot) {
      slot = registry_.create(workload_case, gpu_, options_);
      slot->prepare();
    }
    return *slot;
  }

 private:
  const WorkloadRegistry& registry_;
  Gpu& gpu_;
  const WorkloadOptions& options_;
  Case keep_;
  std::map<Case, std::unique_ptr<Workload>> workloads_;
};

// Energy per item of the grid repetitions a resumed run already holds.
std::map<CaseSetting, std::vector<double>> stored_repetitions(Store& store, std::int64_t run_id) {
  std::map<CaseSetting, std::vector<double>> stored;
  for (const auto& row : store.measurements()) {
    if (row.run_id != run_id || row.point.role != RecordRole::grid) continue;
    auto& energies = stored[{row.point.point.workload_case, row.point.point.setting}];
    energies.push_back(energy_per_item(row.measurement).value_or(0.0));
  }
  return stored;
}

void maybe_kill_for_test(std::size_t points_recorded) {
  if (const auto limit = test_kill_after_points(); limit && static_cast<long>(points_recorded) >= *limit) {
    std::raise(SIGKILL);
  }
}

}  // namespace

bool clock_changes_allowed(const Gpu& gpu, const SweepOptions& options) {
  return options.allow_clock_changes || !is_hardware_gpu(gpu.identity());
}

void check_sweep_allowed(const Gpu& gpu, const Schedule& schedule, const SweepOptions& options) {
  std::vector<Setting> used;
  for (const auto& point : schedule.points) used.push_back(point.setting);
  check_clock_changes_allowed(used, clock_changes_allowed(gpu, options));
}

std::optional<long> test_kill_after_points() {
  const char* value = std::getenv("DVFSLAB_TEST_KILL_AFTER_POINTS");
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::strtol(value, nullptr, 10);
}

Schedule prepare_sweep(Gpu& gpu, const Plan& plan, const WorkloadRegistry& registry, const SweepOptions& options) {
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
      throw ConfigError(plan.source_name,
                        fmt::format("unknown workload '{}' for {}: choose one of {}", workload_case.workload,
                                    identity.name,
                                    available.empty() ? std::string("(none available)")
                                                      : fmt::format("{}", fmt::join(available, ", "))));
    }
  }
  return schedule;
}

SweepResult run_sweep(Gpu& gpu, const Plan& plan, const WorkloadRegistry& registry, Store& store,
                      const SweepOptions& options, ProgressReporter& progress) {
  const Schedule schedule = prepare_sweep(gpu, plan, registry, options);
  check_sweep_allowed(gpu, schedule, options);
  const MeasurePolicy& policy = plan.measure;
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
  std::optional<RunInfo> unfinished;
  if (options.resume) {
    unfinished = store.find_unfinished_run(info.plan_hash, info.gpu.uuid, info.shard_index, info.shard_count);
  }
  if (unfinished) {
    result.run_id = unfinished->id;
    result.resumed = true;
    store.reopen_run(result.run_id);
    repetitions = stored_repetitions(store, result.run_id);
  } else {
    result.run_id = store.begin_run(info);
  }

  const auto finished_before = [&](const ScheduledPoint& point) {
    if (point.role != PointRole::grid) return false;
    const auto it = repetitions.find({point.workload_case, point.setting});
    return it != repetitions.end() && !needs_another_repetition(policy, it->second);
  };
  std::size_t already_done = 0;
  for (const auto& point : schedule.points) already_done += finished_before(point) ? 1 : 0;

  Clock& clock = gpu.clock();
  const double started_at = clock.now_s();
  EnergyMeter meter(gpu);
  meter.start();
  const double window_s = policy.resolved_duration_s(meter.sensor_period_s());
  const Case drift_case = schedule.points.front().workload_case;
  WorkloadCache workloads(registry, gpu, options.workload_options, drift_case);
  std::map<Case, IterationPace> paces;
  std::vector<double> drift_energies;
  std::optional<Setting> applied;
  EffectiveSetting effective;
  std::size_t done = 0, recorded_points = 0;

  try {
    progress.start(schedule, gpu.identity(), already_done);
    for (const auto& point : schedule.points) {
      PointOutcome outcome;
      outcome.point = point;
      if (finished_before(point)) {
        ++result.points_skipped;
        progress.point_done(outcome, ++done, schedule.points.size());
        continue;
      }
      if (!applied || *applied != point.setting) {
        effective = guard.apply(point.setting);
        const bool changed = applied ? true : !point.setting.is_default();
        applied = point.setting;
        if (changed) clock.sleep_for(policy.settle_s);
      }
      Workload& workload = workloads.get(point.workload_case);
      IterationPace& pace = paces[point.workload_case];
      sweep_detail::warm_up(workload, clock, policy, pace);

      auto& energies = repetitions[{point.workload_case, point.setting}];
      std::vector<double> drift_energy;
      std::vector<double>& series = point.role == PointRole::grid ? energies : drift_energy;
      bool mismatch = false;
      do {
        Measurement m = sweep_detail::measure_window(meter, workload, clock, window_s, pace, "point");
        m.flags.clock_mismatch = m.flags.clock_mismatch || differs(point.setting.sm_mhz, m.sm_mhz_mean) ||
                                 differs(point.setting.mem_mhz, m.mem_mhz_mean);
        mismatch = mismatch || m.flags.clock_mismatch;
        PointRecord record;
        record.point = Point{point.workload_case, point.setting,
                             point.role == PointRole::grid ? static_cast<int>(series.size()) : point.sequence};
        record.role = point.role == PointRole::grid ? RecordRole::grid : RecordRole::drift;
        record.order_index = point.sequence;
        record.is_default = point.setting.is_default();
        record.item_unit = workload.item_unit();
        record.effective_sm_mhz = effective.sm_mhz;
        record.effective_mem_mhz = effective.mem_mhz;
        store.record(result.run_id, record, m);
        ++result.measurements;
        ++outcome.repetitions;
        series.push_back(energy_per_item(m).value_or(0.0));
        outcome.energy_per_item_j = energy_per_item(m);
        outcome.items_per_s = m.duration_s > 0 ? std::optional(m.items / m.duration_s) : std::nullopt;
        outcome.mean_power_w = m.mean_power_w;
        outcome.item_unit = workload.item_unit();
        outcome.flags |= m.flags;
      } while (point.role == PointRole::grid && needs_another_repetition(policy, series));
      if (point.role == PointRole::drift && !series.empty()) drift_energies.push_back(series.front());
      result.clock_mismatches += mismatch ? 1 : 0;
      ++result.points_measured;
      if (policy.cooldown_s > 0) clock.sleep_for(policy.cooldown_s);
      progress.point_done(outcome, ++done, schedule.points.size());
      maybe_kill_for_test(++recorded_points);
    }
    guard.restore();
    store.finish_run(result.run_id, RunStatus::finished);
    progress.finish();
  } catch (const InterruptedError&) {
    progress.finish();
    store.finish_run(result.run_id, RunStatus::interrupted);
    throw;
  } catch (...) {
    progress.finish();
    store.finish_run(result.run_id, RunStatus::failed);
    throw;
  }
  meter.stop();
  if (drift_energies.size() >= 2 && drift_energies.front() > 0) {
    result.drift_pct = 100.0 * (drift_energies.back() / drift_energies.front() - 1.0);
  }
  result.gpu_seconds = clock.now_s() - started_at;
  return result;
}

}  // namespace dvfslab
