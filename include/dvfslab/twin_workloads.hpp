#pragma once
// The workloads of a twin (dvfslab/twin.hpp): one per workload key of its source,
// each iteration one unit of the source's work, or 1/k of a unit where a unit
// takes longer than a second at the default setting (k = that time in seconds,
// rounded up), so that a sweep's windows stay seconds long. Items count units.
#include "dvfslab/gpu.hpp"
#include "dvfslab/workload.hpp"

namespace dvfslab {

// Registers one workload per workload key of `twin_gpu`'s source (it applies to
// that GPU only). Throws ConfigError when `twin_gpu`
// is not a twin.
void add_twin_workloads(WorkloadRegistry& registry, const Gpu& twin_gpu);

}  // namespace dvfslab
