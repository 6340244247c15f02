#pragma once
// What the tests of dvfslab's own CUDA kernels share: a suite over element types
// that runs only where the kernels can, and how far a kernel computing in FP32 and
// storing each type may differ from the formula evaluated in FP32.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "workload/torch/own_kernels.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {

class OwnKernelOnCuda : public ::testing::TestWithParam<torch::ScalarType> {
 protected:
  void SetUp() override {
    if (!cuda_usable()) GTEST_SKIP() << "needs a CUDA GPU and a LibTorch with CUDA";
    if (!own_kernels_built()) GTEST_SKIP() << "this build has no CUDA compiler, so no kernels of its own";
  }
};

// Absolute and relative tolerance: a few units in the last place of the type.
inline double kernel_tolerance(torch::ScalarType type) {
  return type == torch::kFloat ? 1e-5 : (type == torch::kHalf ? 4e-3 : 3e-2);
}

}  // namespace dvfslab::torch_backend
