#pragma once
// Optimizer updates as one fused kernel per step. PyTorch's foreach SGD and AdamW
// pass over every parameter tensor four to ten times per step; the fused kernels
// read and write each once, which on a large model (AlexNet's 61 M, VGG-16's 138 M,
// GPT-2's 124 M parameters) is a visible part of a training step. They exist for
// CUDA tensors from LibTorch 2.2 on; elsewhere the optimizers use foreach kernels.
#include <torch/types.h>

#include <vector>

namespace dvfslab::torch_backend {

// True when this LibTorch has fused SGD and AdamW kernels for tensors on `device`.
bool fused_steps_available(const torch::Device& device);

// PyTorch's SGD with momentum and (coupled) weight decay, dampening 0, no Nesterov:
// buffer = momentum·buffer + grad + weight_decay·param; param -= lr·buffer.
// Buffers start at zero (the first step then leaves buffer = grad, as PyTorch's does).
void fused_sgd_momentum_step(const std::vector<torch::Tensor>& parameters,
                             const std::vector<torch::Tensor>& gradients,
                             const std::vector<torch::Tensor>& buffers, double learning_rate, double momentum,
                             double weight_decay);

// PyTorch's AdamW (decoupled weight decay, bias-corrected moments, no AMSGrad).
// `step_count` is a one-element float tensor on the parameters' device holding the
// number of this step (already incremented); the kernel reads it on the device.
void fused_adamw_step(const std::vector<torch::Tensor>& parameters,
                      const std::vector<torch::Tensor>& gradients,
                      const std::vector<torch::Tensor>& first_moments,
                      const std::vector<torch::Tensor>& second_moments, const torch::Tensor& step_count,
                      double learning_rate, double beta1, double beta2, double weight_decay, double epsilon);

}  // namespace dvfslab::torch_backend
