#pragma once
// Switches a whole CNN to fused kernels: what `--no-fusion` turns off.
#include <torch/nn/module.h>

namespace dvfslab::torch_backend {

// Training on CUDA: every convolution unit without batch norm runs its
// convolution + bias + ReLU forward as one call. Returns how many units do.
int fuse_for_training(torch::nn::Module& network);

// Inference: freezes every convolution unit (batch norm folded, weights stored in
// `dtype`, fused kernels) and stores the linear layers' parameters in `dtype`, so
// no step casts a weight. The network must be in eval mode and stay there.
// Returns how many convolution units were frozen.
int freeze_for_inference(torch::nn::Module& network, torch::ScalarType dtype);

}  // namespace dvfslab::torch_backend
