#pragma once
// A linear layer whose operands autocast has already cast (autocast_operand.hpp)
// while its bias stays in its own type. In training on CUDA with dvfslab's kernels
// built, its backward sums the bias's gradient with a kernel of dvfslab's own that
// writes the bias's type (kernels/bias_gradient_kernels.hpp); ATen would sum the
// 16-bit gradient in its generic reduction and widen the sum in another kernel.
// The products are ATen's either way.
#include <torch/types.h>

namespace dvfslab::torch_backend {

// input · weightᵀ + bias over the last dimension of `input`, in the input's type;
// `bias` may be undefined. Differentiable in all three; the bias's gradient comes
// back in the bias's type.
torch::Tensor biased_linear(const torch::Tensor& input, const torch::Tensor& weight,
                            const torch::Tensor& bias);

// Whether biased_linear's backward runs dvfslab's kernel: a CUDA build with the
// kernels, gradients being recorded, a defined bias, and a 16-bit dense input and
// weight on 16-byte boundaries whose output width is a multiple of 4.
bool own_bias_gradient_applies(const torch::Tensor& input, const torch::Tensor& weight,
                               const torch::Tensor& bias);

}  // namespace dvfslab::torch_backend
