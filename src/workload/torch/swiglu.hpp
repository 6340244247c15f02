#pragma once
// The SwiGLU of the Llama decoder's MLP: on CUDA one kernel of dvfslab's own
// forward and one backward (kernels/), elsewhere ATen's operations.
#include <torch/types.h>

namespace dvfslab::torch_backend {

// silu(gate) · up, where the last dimension of `gate_and_up` is [gate | up] (the
// joined projection's output); the result has half its last dimension.
torch::Tensor swiglu(const torch::Tensor& gate_and_up);

// Whether swiglu runs dvfslab's kernels: a CUDA build with the kernels, a dense
// float, half or bfloat16 CUDA tensor whose halves are multiples of 16 bytes.
bool own_swiglu_applies(const torch::Tensor& gate_and_up);

}  // namespace dvfslab::torch_backend
