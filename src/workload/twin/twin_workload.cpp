// Workloads of a twin: one unit of its source's work per iteration, or an equal
// part of a unit where a unit is long.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "dvfslab/twin.hpp"
#include "dvfslab/twin_workloads.hpp"

namespace dvfslab {
namespace {

// The DNN tables' units are times to accuracy, minutes to hours each. Iterations
// of at most about this long at the default setting keep a sweep's windows (and
// the meter's samples on the virtual clock) to seconds.
constexpr double kLongestIteration_s = 1.0;

class TwinWorkload final : public Workload {
 public:
  TwinWorkload(const Case& workload_case, Gpu& gpu, double iterations_per_unit)
      : case_(workload_case), gpu_(gpu), iterations_per_unit_(iterations_per_unit) {}
  const Case& workload_case() const override { return case_; }
  std::string item_unit() const override { return "units of work"; }
  double items_per_iteration() const override { return 1.0 / iterations_per_unit_; }
  void run_iterations(std::int64_t count) override {
    run_twin_work(gpu_, case_.workload, static_cast<double>(count) / iterations_per_unit_);
  }

 private:
  Case case_;
  Gpu& gpu_;
  double iterations_per_unit_;
};

double iterations_per_unit(const Gpu& gpu, const std::string& workload) {
  const auto at_default = twin_rates(gpu, workload, Setting{});
  if (!at_default) return 1.0;
  return std::max(1.0, std::ceil(at_default->time_per_unit_s / kLongestIteration_s));
}

}  // namespace

void add_twin_workloads(WorkloadRegistry& registry, const Gpu& twin_gpu) {
  const std::string origin = twin_origin(twin_gpu);
  for (const std::string& workload : twin_workload_keys(twin_gpu)) {
    registry.add(
        WorkloadInfo{workload, "units of work", 1, fmt::format("twin of {}", origin)},
        [gpu = &twin_gpu](const Gpu& candidate) { return &candidate == gpu; },
        [](const Case& workload_case, Gpu& target, const WorkloadOptions&) -> std::unique_ptr<Workload> {
          return std::make_unique<TwinWorkload>(workload_case, target,
                                                iterations_per_unit(target, workload_case.workload));
        });
  }
}

}  // namespace dvfslab
