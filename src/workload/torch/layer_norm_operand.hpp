#pragma once
// A layer norm whose output is the operand of the matrix product that follows it
// (GPT-2's pre-norm blocks and final norm), and the residual add before it. Under
// autocast the product wants a 16-bit operand while ATen's layer norm writes FP32;
// on CUDA with dvfslab's kernels built one kernel writes the product's type
// directly and its backward reads the 16-bit gradient
// (kernels/layer_norm_kernels.hpp). Elsewhere ATen's layer norm, then the cast
// autocast would make.
#include <torch/nn/modules/normalization.h>
#include <torch/types.h>

#include <utility>

namespace dvfslab::torch_backend {

// The layer norm of `input` over its last dimension with the given gain, bias and
// epsilon, in `output_type`; differentiable in input, gain and bias.
torch::Tensor layer_norm_to(const torch::Tensor& input, const torch::Tensor& gain, const torch::Tensor& bias,
                            double epsilon, torch::ScalarType output_type);

// Whether layer_norm_to runs dvfslab's kernels: a CUDA build with the kernels, a
// dense float, half or bfloat16 CUDA input on a 16-byte boundary whose last
// dimension is a multiple of 4, and a gain and bias of that length in its type.
bool own_layer_norm_applies(const torch::Tensor& input, const torch::Tensor& gain, const torch::Tensor& bias);

// `norm` applied to `input`, in autocast's type when autocast is on for the input's
// device and the input is FP32; otherwise exactly norm->forward(input).
torch::Tensor layer_norm_operand(torch::nn::LayerNorm norm, const torch::Tensor& input);

// A residual add and the norm of its result: {stream + branch, layer_norm_operand
// of that sum}. With an FP32 stream and a branch in autocast's type, on CUDA with
// dvfslab's kernels, one kernel does both forward and one backward (the stream's
// gradient is the norm's plus the sum's own, and the branch's is the same in its
// type); otherwise the add, then layer_norm_operand.
std::pair<torch::Tensor, torch::Tensor> residual_layer_norm_operand(const torch::Tensor& stream,
                                                                    const torch::Tensor& branch,
                                                                    torch::nn::LayerNorm norm);

}  // namespace dvfslab::torch_backend
