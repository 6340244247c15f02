#pragma once
// A LibTorch workload as the workload registry hands it to sweeps and searches,
// its failures explained in one line (explain_torch_errors).
#include <memory>

#include "dvfslab/torch_workloads.hpp"

namespace dvfslab {

std::unique_ptr<Workload> with_explained_errors(std::unique_ptr<TorchWorkload> workload);

}  // namespace dvfslab
