#pragma once
// The one place that knows every workload backend the command line offers.
#include <vector>

#include "dvfslab/plan.hpp"
#include "dvfslab/workload.hpp"

namespace dvfslab::cli {

// Simulated profiles (for sim:NAME GPUs), the LibTorch models (real GPUs, when built
// with LibTorch) and the plan's command workloads (real GPUs).
WorkloadRegistry make_workload_registry(const std::vector<CommandSpec>& commands);

}  // namespace dvfslab::cli
