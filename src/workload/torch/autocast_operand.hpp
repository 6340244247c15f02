#pragma once
// The operands of a matrix product cast to the type autocast computes in before
// the product sees them, so that autocast has nothing left to cast. On CUDA with
// dvfslab's kernels built the cast runs as one of its own kernels in both
// directions (kernels/cast_kernels.hpp: ATen's backward cast, 16-bit gradients to
// FP32, converts one element per load); elsewhere it is ATen's, as autocast's would be.
#include <torch/types.h>

namespace dvfslab::torch_backend {

// `tensor` in autocast's type when autocast is on for its device and it is FP32;
// otherwise `tensor` itself (an undefined tensor, such as a missing bias, included).
// The gradient flows back in the tensor's own type.
torch::Tensor autocast_operand(const torch::Tensor& tensor);

// Whether converting `tensor` runs dvfslab's kernel: a CUDA build with the kernels,
// a dense float, half or bfloat16 CUDA tensor starting on a 16-byte boundary.
bool own_cast_applies(const torch::Tensor& tensor);

// `tensor` converted to `type`, by dvfslab's kernel where own_cast_applies and by
// ATen elsewhere; differentiable either way.
torch::Tensor cast_to(const torch::Tensor& tensor, torch::ScalarType type);

}  // namespace dvfslab::torch_backend
