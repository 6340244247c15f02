#pragma once
// What the layers that may run dvfslab's own CUDA kernels (kernels/) ask before
// choosing them over ATen's.
#include <torch/types.h>

namespace dvfslab::torch_backend {

// True when this build compiled the kernels (a CUDA compiler for a LibTorch with CUDA).
bool own_kernels_built();

// Whether the tensor's data starts on a 16-byte boundary, so that the kernels may
// move it in 16-byte packs.
bool aligned_for_packs(const torch::Tensor& tensor);

}  // namespace dvfslab::torch_backend
