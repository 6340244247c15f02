// Workloads of a replayed sweep table: one unit of the table's work per iteration.
#include <fmt/format.h>

#include "dvfslab/replay.hpp"
#include "dvfslab/replay_workloads.hpp"

namespace dvfslab {
namespace {

class ReplayWorkload final : public Workload {
 public:
  ReplayWorkload(const Case& workload_case, Gpu& gpu) : case_(workload_case), gpu_(gpu) {}
  const Case& workload_case() const override { return case_; }
  std::string item_unit() const override { return "units of work"; }
  double items_per_iteration() const override { return 1.0; }
  void run_iterations(std::int64_t count) override {
    run_replayed_work(gpu_, case_.workload, static_cast<double>(count));
  }

 private:
  Case case_;
  Gpu& gpu_;
};

}  // namespace

void add_replay_workloads(WorkloadRegistry& registry, const Gpu& replay_gpu) {
  const std::string origin = replay_table_origin(replay_gpu);
  for (const std::string& workload : replay_workload_keys(replay_gpu)) {
    std::string description = fmt::format("replayed from {}", origin);
    if (const auto baseline = replay_own_baseline(replay_gpu, workload)) {
      description += fmt::format("; no row at the GPU's default, so its default is {}", to_string(*baseline));
    }
    registry.add(
        WorkloadInfo{workload, "units of work", 1, description},
        [gpu = &replay_gpu](const Gpu& candidate) { return &candidate == gpu; },
        [](const Case& workload_case, Gpu& target, const WorkloadOptions&) -> std::unique_ptr<Workload> {
          return std::make_unique<ReplayWorkload>(workload_case, target);
        });
  }
}

}  // namespace dvfslab
