#pragma once
// The one place that knows every workload backend the command line offers.
#include <memory>
#include <span>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/workload.hpp"

namespace dvfslab::cli {

// Simulated profiles (for sim:NAME GPUs), the LibTorch models (real GPUs, when built
// with LibTorch), the plan's command workloads (real GPUs) and the workloads of every
// replayed table among `gpus` (replay:FILE.csv, that GPU only). The registry refers
// to those GPUs: they must outlive it.
WorkloadRegistry make_workload_registry(const std::vector<CommandSpec>& commands,
                                        std::span<const std::unique_ptr<Gpu>> gpus);

}  // namespace dvfslab::cli
