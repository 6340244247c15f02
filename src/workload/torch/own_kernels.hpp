#pragma once
// What the layers that may run dvfslab's own CUDA kernels (kernels/) ask before
// choosing them over ATen's, and what they share when they call them.
#include <torch/types.h>

#include "workload/torch/kernels/element_type.hpp"

// CMake defines DVFSLAB_OWN_KERNELS when it compiled kernels/ with a CUDA compiler
// for a LibTorch built with CUDA.
#if defined(DVFSLAB_OWN_KERNELS)
#include <cuda_runtime_api.h>
#endif

namespace dvfslab::torch_backend {

// True when this build compiled the kernels (a CUDA compiler for a LibTorch with CUDA).
bool own_kernels_built();

// Whether the tensor's data starts on a 16-byte boundary, so that the kernels may
// move it in 16-byte packs.
bool aligned_for_packs(const torch::Tensor& tensor);

// `tensor` dense and on a 16-byte boundary, copied only where it is not already.
torch::Tensor dense_for_packs(const torch::Tensor& tensor);

// Whether the kernels take this type: float, half or bfloat16.
bool kernel_element_type_supported(torch::ScalarType type);
// The kernels' name for one of the types they take.
kernels::ElementType kernel_element_type(torch::ScalarType type);

#if defined(DVFSLAB_OWN_KERNELS)
// Throws Error("<kernel>: <CUDA's message>") when a launch failed.
void check_kernel_launch(cudaError_t status, const char* kernel);
#endif

}  // namespace dvfslab::torch_backend
