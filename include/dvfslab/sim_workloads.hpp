#pragma once
// Simulated deep-learning workloads for simulated GPUs: per-iteration profiles of
// the study's CNNs (alexnet, vgg16, googlenet, resnet50; images) and two
// transformers (bert_base, gpt2_small; tokens), in training and inference, as
// SimKernels. docs/simulation.md gives every parameter and why.
#include <string>
#include <string_view>
#include <vector>

#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/workload.hpp"

namespace dvfslab {

// Registers every simulated workload; each applies only to a SimGpu.
void add_sim_workloads(WorkloadRegistry& registry);

// The simulated workloads' names, in registration order.
std::vector<std::string> sim_workload_names();
// Those the simulated GPUs' constants were calibrated with (docs/simulation.md).
std::vector<std::string> calibrated_sim_workload_names();

// The batch sizes the study's set-up uses for `workload` in `mode` (for the
// built-in study plan); throws ConfigError for an unknown workload.
std::vector<int> sim_workload_study_batches(std::string_view workload, Mode mode);

// One iteration of `workload_case` on a GPU of `spec`; throws ConfigError for an
// unknown workload or a non-positive batch.
SimKernel sim_workload_kernel(const Case& workload_case, const SimGpuSpec& spec,
                              const WorkloadOptions& options = {});

// Items (images or tokens) one iteration processes.
double sim_workload_items_per_iteration(const Case& workload_case, const WorkloadOptions& options = {});

}  // namespace dvfslab
