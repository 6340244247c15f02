#pragma once
// The workloads a program offers by default, built by the library: simulated
// profiles (for sim:NAME GPUs), the LibTorch models (real GPUs, when the program
// links dvfslab::torch), a plan's command workloads (real GPUs) and the workloads of
// every replayed table or twin among the GPUs (replay:FILE.csv, twin:FILE.csv,
// that GPU only).
//
//   WorkloadRegistry registry = make_default_workload_registry(plan_commands(plan), gpus);
#include <memory>
#include <span>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/workload.hpp"
#ifdef DVFSLAB_HAVE_TORCH
#include "dvfslab/torch_workloads.hpp"
#endif

namespace dvfslab {

// The registry of make_default_workload_registry, with `add_model_workloads` (when
// given) registering model workloads after the simulated ones. The registry refers
// to `gpus`: they must outlive it.
WorkloadRegistry make_workload_registry(const std::vector<CommandSpec>& commands,
                                        std::span<const std::unique_ptr<Gpu>> gpus,
                                        void (*add_model_workloads)(WorkloadRegistry&));

// Defined here, not in the library, so that a program linking dvfslab::torch gets
// the LibTorch models (DVFSLAB_HAVE_TORCH comes with that target).
inline WorkloadRegistry make_default_workload_registry(const std::vector<CommandSpec>& commands = {},
                                                       std::span<const std::unique_ptr<Gpu>> gpus = {}) {
#ifdef DVFSLAB_HAVE_TORCH
  return make_workload_registry(commands, gpus, add_torch_workloads);
#else
  return make_workload_registry(commands, gpus, nullptr);
#endif
}

}  // namespace dvfslab
