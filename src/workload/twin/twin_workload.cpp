// Workloads of a twin: one unit of its source's work per iteration.
#include <fmt/format.h>

#include "dvfslab/twin.hpp"
#include "dvfslab/twin_workloads.hpp"

namespace dvfslab {
namespace {

class TwinWorkload final : public Workload {
 public:
  TwinWorkload(const Case& workload_case, Gpu& gpu) : case_(workload_case), gpu_(gpu) {}
  const Case& workload_case() const override { return case_; }
  std::string item_unit() const override { return "units of work"; }
  double items_per_iteration() const override { return 1.0; }
  void run_iterations(std::int64_t count) override {
    run_twin_work(gpu_, case_.workload, static_cast<double>(count));
  }

 private:
  Case case_;
  Gpu& gpu_;
};

}  // namespace

void add_twin_workloads(WorkloadRegistry& registry, const Gpu& twin_gpu) {
  const std::string origin = twin_origin(twin_gpu);
  for (const std::string& workload : twin_workload_keys(twin_gpu)) {
    registry.add(
        WorkloadInfo{workload, "units of work", 1, fmt::format("twin of {}", origin)},
        [gpu = &twin_gpu](const Gpu& candidate) { return &candidate == gpu; },
        [](const Case& workload_case, Gpu& target, const WorkloadOptions&) -> std::unique_ptr<Workload> {
          return std::make_unique<TwinWorkload>(workload_case, target);
        });
  }
}

}  // namespace dvfslab
