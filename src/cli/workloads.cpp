#include "cli/workloads.hpp"

#include "dvfslab/command.hpp"
#include "dvfslab/replay.hpp"
#include "dvfslab/replay_workloads.hpp"
#include "dvfslab/sim_workloads.hpp"
#ifdef DVFSLAB_HAVE_TORCH
#include "dvfslab/torch_workloads.hpp"
#endif

namespace dvfslab::cli {
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
      for (auto at = argument.find(field); at != std::string::npos; at = argument.find(field, at + value.size())) {
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
        std::move(info), [](const Gpu& gpu) { return is_hardware_gpu(gpu.identity()); },
        [argv = command.argv](const Case& workload_case, Gpu&, const WorkloadOptions&) {
          return make_command_workload(substitute(argv, workload_case), workload_case);
        });
  }
}

}  // namespace

WorkloadRegistry make_workload_registry(const std::vector<CommandSpec>& commands,
                                        std::span<const std::unique_ptr<Gpu>> gpus) {
  WorkloadRegistry registry;
  add_sim_workloads(registry);
#ifdef DVFSLAB_HAVE_TORCH
  add_torch_workloads(registry);
#endif
  add_command_workloads(registry, commands);
  for (const auto& gpu : gpus) {
    if (is_replay_gpu(*gpu)) add_replay_workloads(registry, *gpu);
  }
  return registry;
}

}  // namespace dvfslab::cli
