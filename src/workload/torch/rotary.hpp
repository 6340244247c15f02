#pragma once
// The rotary position embedding of the Llama decoder (the rotate-half form): on
// CUDA one kernel of dvfslab's own forward and one backward (kernels/), elsewhere
// ATen's operations.
#include <torch/types.h>

namespace dvfslab::torch_backend {

// Rotates each head of x [batch, tokens, heads, head_dim] (any strides) by its
// token's angles: x·cos + [−x₂, x₁]·sin, with x₁, x₂ the two halves of head_dim.
// cos and signed_sin are FP32 [tokens, head_dim]: each feature's cosine, and its
// sine negated on the first half. Returns a new dense [batch, tokens, heads,
// head_dim] tensor of x's dtype.
torch::Tensor rotary_embedding(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& signed_sin);

// Whether rotary_embedding runs dvfslab's kernel for these tensors: a CUDA build
// with the kernels, x of float, half or bfloat16 on CUDA with head_dim innermost,
// head_dim / 2 and x's strides multiples of 16 bytes, and the tables dense FP32
// on x's device.
bool own_rotary_applies(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& signed_sin);

}  // namespace dvfslab::torch_backend
