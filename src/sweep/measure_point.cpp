// One point of a sweep, measured and stored (see measure_point.hpp).
#include "sweep/measure_point.hpp"

#include "dvfslab/clock_check.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab::sweep_detail {
namespace {

std::optional<double> energy_per_item(const Measurement& m) {
  if (!m.energy_j || m.items <= 0) return std::nullopt;
  return *m.energy_j / m.items;
}

void throw_if_interrupted(const JobGuard& guard) {
  if (guard.interrupted())
    throw InterruptedError("interrupted: the GPU was restored and dvfslab is stopping");
}

}  // namespace

Workload& WorkloadCache::get(const Case& workload_case) {
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

void PointMeasurer::apply(const Setting& setting) {
  if (applied_ && *applied_ == setting) return;
  effective_ = context_.guard.apply(setting);
  const bool changed = applied_ ? true : !setting.is_default();
  applied_ = setting;
  if (changed) context_.gpu.clock().sleep_for(context_.policy.settle_s);
}

void PointMeasurer::add_gpu_energy(const Measurement& m) {
  if (gpu_energy_.empty()) {
    for (const GpuMeasurement& share : m.gpus)
      gpu_energy_.push_back(SweepGpuEnergy{share.uuid, share.index, share.name, 0.0});
  }
  for (std::size_t i = 0; i < gpu_energy_.size() && i < m.gpus.size(); ++i) {
    std::optional<double>& total = gpu_energy_[i].energy_j;
    const std::optional<double>& window = m.gpus[i].measurement.energy_j;
    total = total && window ? std::optional(*total + *window) : std::nullopt;
  }
}

PointOutcome PointMeasurer::measure_point(const ScheduledPoint& point, std::vector<double>& series,
                                          std::vector<double>& throughput) {
  throw_if_interrupted(context_.guard);
  apply(point.setting);
  Clock& clock = context_.gpu.clock();
  Workload& workload = context_.workloads.get(point.workload_case);
  IterationPace& pace = paces_[point.workload_case];
  // A point that continues the one just measured (a search asking for one more
  // window of the same setting) finds the workload warm and the GPU steady: its
  // windows follow on as a sweep point's own repetitions do. An idle cool-down in
  // between breaks that.
  const bool continues = last_measured_ && last_measured_->first == point.workload_case &&
                         last_measured_->second == point.setting && context_.policy.cooldown_s <= 0;
  last_measured_.reset();
  if (!continues) warm_up(workload, clock, context_.policy, pace);

  PointOutcome outcome;
  outcome.point = point;
  const bool grid = point.role == PointRole::grid;
  do {
    Measurement m = measure_window(context_.meter, workload, clock, context_.window_s, pace, "point");
    throw_if_interrupted(context_.guard);
    m.flags.clock_mismatch =
        m.flags.clock_mismatch || clock_differs(point.setting, m, context_.guard.varied_gpu());
    PointRecord record;
    record.point =
        Point{point.workload_case, point.setting, grid ? static_cast<int>(series.size()) : point.sequence};
    record.role = grid ? RecordRole::grid : RecordRole::drift;
    record.order_index = point.sequence;
    record.is_default = point.setting.is_default();
    record.item_unit = workload.item_unit();
    record.effective_sm_mhz = effective_.sm_mhz;
    record.effective_mem_mhz = effective_.mem_mhz;
    context_.store.record(context_.run_id, record, m);
    add_gpu_energy(m);
    ++outcome.repetitions;
    series.push_back(energy_per_item(m).value_or(0.0));
    outcome.energy_per_item_j = energy_per_item(m);
    outcome.items_per_s = m.duration_s > 0 ? std::optional(m.items / m.duration_s) : std::nullopt;
    if (outcome.items_per_s) throughput.push_back(*outcome.items_per_s);
    outcome.mean_power_w = m.mean_power_w;
    // A job's mean over several GPUs could match another setting's by chance.
    if (m.gpus.empty()) outcome.sm_mhz_mean = m.sm_mhz_mean, outcome.mem_mhz_mean = m.mem_mhz_mean;
    outcome.item_unit = workload.item_unit();
    outcome.flags |= m.flags;
  } while (grid && (point.windows > 0 ? outcome.repetitions < point.windows
                                      : context_.stop_rule.needs_another_repetition(series)));
  outcome.energy_per_item_j_series = series;
  outcome.items_per_s_series = throughput;
  last_measured_.emplace(point.workload_case, point.setting);
  if (context_.policy.cooldown_s > 0) clock.sleep_for(context_.policy.cooldown_s);
  return outcome;
}

}  // namespace dvfslab::sweep_detail
