// Iteration times for a dry run's estimate (see rehearse_iterations, sweep.hpp).
#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "dvfslab/default_workloads.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/sweep.hpp"

namespace dvfslab {

IterationSeconds rehearse_iterations(const Gpu& gpu, const Schedule& schedule, const MeasurePolicy& policy,
                                     const WorkloadOptions& workload_options) {
  if (gpu.persists_settings()) return {};
  const std::unique_ptr<Gpu> rehearsal = open_gpu(gpu.identity().device_spec);
  const WorkloadRegistry registry =
      make_workload_registry({}, std::span<const std::unique_ptr<Gpu>>(&rehearsal, 1), nullptr);
  // The copy lives and dies here: nothing real changes.
  ClockGuard guard(*rehearsal, GuardOptions{{}, true});
  Clock& clock = rehearsal->clock();
  const std::int64_t iterations = std::max<std::int64_t>(1, policy.warmup_iterations);
  std::map<Case, std::unique_ptr<Workload>> workloads;
  auto seconds = std::make_shared<std::map<std::pair<Case, Setting>, double>>();
  for (const auto& point : schedule.points) {
    if (seconds->count({point.workload_case, point.setting})) continue;
    guard.apply(point.setting);
    auto& workload = workloads[point.workload_case];
    if (!workload) {
      workload = registry.create(point.workload_case, *rehearsal, workload_options);
      workload->prepare();
    }
    const double before = clock.now_s();
    workload->run_iterations(iterations);
    (*seconds)[{point.workload_case, point.setting}] =
        (clock.now_s() - before) / static_cast<double>(iterations);
  }
  return [seconds](const Case& workload_case, const Setting& setting) -> std::optional<double> {
    const auto it = seconds->find({workload_case, setting});
    return it == seconds->end() ? std::nullopt : std::optional(it->second);
  };
}

}  // namespace dvfslab
