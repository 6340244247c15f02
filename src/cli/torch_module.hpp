#pragma once
// The LibTorch module of the dvfslab executable (cli/torch_module_interface.hpp says
// why LibTorch is apart): loaded on first use only, by the commands that run
// LibTorch models.
#include <memory>
#include <span>
#include <vector>

#include "cli/torch_module_interface.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/workload.hpp"

namespace dvfslab::cli {

// Runs `dvfslab run-workload` in the module (builds with LibTorch only). Throws
// Error when the module cannot be found or loaded (one line: where it was looked for).
void run_workload_in_module(const RunWorkloadArgs& args);

// The workload registry of sweep, search, study and slurm: the library's default
// one, with the LibTorch models when this build has them and `gpus` may run them
// (no GPU given, or one that runs programs in wall time: a simulated or replayed
// GPU runs no model, so the module is not loaded for it).
WorkloadRegistry make_cli_workload_registry(const std::vector<CommandSpec>& commands = {},
                                            std::span<const std::unique_ptr<Gpu>> gpus = {});

}  // namespace dvfslab::cli
