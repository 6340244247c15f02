// The default workload registry (dvfslab/default_workloads.hpp).
#include "dvfslab/command.hpp"
#include "dvfslab/default_workloads.hpp"
#include "dvfslab/replay.hpp"
#include "dvfslab/replay_workloads.hpp"
#include "dvfslab/sim_workloads.hpp"
#include "dvfslab/twin.hpp"
#include "dvfslab/twin_workloads.hpp"

namespace dvfslab {
namespace {

// "{batch}", "{mode}" and "{precision}" in a command's arguments become the case's.
std::vector<std::string> substitute(std::vector<std::string> argv, const Case& workload_case) {
  const std::pair<std::string, std::string> fields[] = {
      {"{batch}", std::to_string(workload_case.batch)},
      {"{mode}", std::string(to_string(workload_case.mode))},
      {"{precision}", std::string(to_string(workload_case.precision))},
  };
  for (auto& argument : argv) {
    for (const auto& [field, value] : fields) {
      for (auto at = argument.find(field); at != std::string::npos;
           at = argument.find(field, at + value.size())) {
        argument.replace(at, field.size(), value);
      }
    }
  }
  return argv;
}

void add_command_workloads(WorkloadRegistry& registry, const std::vector<CommandSpec>& commands) {
  for (const auto& command : commands) {
    WorkloadInfo info{command.name, "items", 1, "the plan's command: " + command.argv.front()};
    // A program's work happens in wall time, which the virtual clock of a simulated
    // or replayed GPU never sees: commands run on hardware GPUs only.
    registry.add(
        std::move(info), [](const Gpu& gpu) { return gpu.persists_settings(); },
        [argv = command.argv](const Case& workload_case, Gpu& gpu, const WorkloadOptions&) {
          return make_command_workload(substitute(argv, workload_case), workload_case, "items", &gpu.clock());
        });
  }
}

}  // namespace

WorkloadRegistry make_workload_registry(const std::vector<CommandSpec>& commands,
                                        std::span<const std::unique_ptr<Gpu>> gpus,
                                        void (*add_model_workloads)(WorkloadRegistry&)) {
  WorkloadRegistry registry;
  add_sim_workloads(registry);
  if (add_model_workloads != nullptr) add_model_workloads(registry);
  add_command_workloads(registry, commands);
  for (const auto& gpu : gpus) {
    if (is_replay_gpu(*gpu)) add_replay_workloads(registry, *gpu);
    if (is_twin_gpu(*gpu)) add_twin_workloads(registry, *gpu);
  }
  return registry;
}

}  // namespace dvfslab
