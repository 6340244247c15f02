#pragma once
// Convolution + bias + ReLU (and + residual) as single calls. On CUDA with cuDNN
// each is one fused cuDNN kernel instead of ATen's three (convolution, bias add,
// ReLU), which saves two passes over the activations: what makes the fused CNN
// layers faster than PyTorch's (measured in docs/results/h200/). Elsewhere they
// compute the same thing with the unfused operators.
#include <torch/types.h>

namespace dvfslab::torch_backend {

// Stride and padding of a square-kernel 2-D convolution (dilation 1, one group).
struct ConvGeometry {
  std::int64_t stride = 1;
  std::int64_t padding = 0;
};

// relu(conv(input, weight) + bias), without autograd.
torch::Tensor conv_bias_relu(const torch::Tensor& input, const torch::Tensor& weight,
                             const torch::Tensor& bias, ConvGeometry geometry);

// relu(conv(input, weight) + bias + residual), without autograd.
torch::Tensor conv_bias_add_relu(const torch::Tensor& input, const torch::Tensor& weight,
                                 const torch::Tensor& bias, const torch::Tensor& residual,
                                 ConvGeometry geometry);

// relu(conv(input, weight) + bias) with autograd: the forward is conv_bias_relu,
// the backward masks the gradient with the output and computes the input, weight
// and bias gradients in one convolution_backward (the input's only when needed).
torch::Tensor trainable_conv_bias_relu(const torch::Tensor& input, const torch::Tensor& weight,
                                       const torch::Tensor& bias, ConvGeometry geometry);

}  // namespace dvfslab::torch_backend
