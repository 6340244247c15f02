#pragma once
// Training batch norm followed by ReLU (optionally with a residual added before the
// ReLU): the end of every convolution unit of GoogLeNet and ResNet-50 in training.
// On CUDA with dvfslab's own kernels built (kernels/batch_norm_kernels.hpp) and a
// channels-last 16-bit input, one custom autograd function; anywhere else ATen's
// operators, which compute the same.
#include <torch/nn/modules/batchnorm.h>
#include <torch/types.h>

namespace dvfslab::torch_backend {

// Whether train_batch_norm_act would run them on these tensors.
bool own_batch_norm_applies(const torch::Tensor& input, const torch::nn::BatchNorm2dImpl& norm,
                            const torch::Tensor& residual);

// act(batch_norm(input) + residual) with batch statistics, updating `norm`'s running
// statistics as its forward does; act is ReLU or nothing, residual may be undefined.
torch::Tensor train_batch_norm_act(const torch::Tensor& input, torch::nn::BatchNorm2dImpl& norm,
                                   const torch::Tensor& residual, bool relu);

}  // namespace dvfslab::torch_backend
