// Workloads of a replayed sweep table: one unit of the table's work per iteration.
#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "dvfslab/replay.hpp"
#include "gpu/replay/replay_gpu.hpp"

namespace dvfslab {
namespace {

class ReplayWorkload final : public Workload {
 public:
  ReplayWorkload(const Case& workload_case, replay::ReplayGpu& gpu) : case_(workload_case), gpu_(gpu) {}
  const Case& workload_case() const override { return case_; }
  std::string item_unit() const override { return "units of work"; }
  double items_per_iteration() const override { return 1.0; }
  void run_iterations(std::int64_t count) override { gpu_.run(case_.workload, static_cast<double>(count)); }

 private:
  Case case_;
  replay::ReplayGpu& gpu_;
};

}  // namespace

void add_replay_workloads(WorkloadRegistry& registry, const Gpu& replay_gpu) {
  const auto* gpu = dynamic_cast<const replay::ReplayGpu*>(&replay_gpu);
  if (gpu == nullptr) {
    throw ConfigError(fmt::format("{} is not a replay GPU: replay workloads need --device replay:FILE.csv",
                                  replay_gpu.identity().name));
  }
  for (const std::string& workload : gpu->table().workloads()) {
    registry.add(
        WorkloadInfo{workload, "units of work", 1, fmt::format("replayed from {} ({})", gpu->table().path().filename().string(), gpu->table().source())},
        [gpu](const Gpu& candidate) { return &candidate == gpu; },
        [](const Case& workload_case, Gpu& target, const WorkloadOptions&) -> std::unique_ptr<Workload> {
          return std::make_unique<ReplayWorkload>(workload_case, dynamic_cast<replay::ReplayGpu&>(target));
        });
  }
}

}  // namespace dvfslab
