#pragma once
// Switches a whole network to fused kernels: what `--no-fusion` turns off.
#include <torch/nn/module.h>

namespace dvfslab::torch_backend {

// A block with a faster inference form once its weights are stored in one dtype
// and no gradient will be asked of it: a convolution unit, a GPT-2 decoder block.
class FreezableBlock {
 public:
  virtual ~FreezableBlock() = default;
  virtual void freeze(torch::ScalarType dtype) = 0;
};

// Training on CUDA: every convolution unit without batch norm runs its
// convolution + bias + ReLU forward as one call. Returns how many units do.
int fuse_for_training(torch::nn::Module& network);

// Inference: freezes every FreezableBlock (a convolution unit folds its batch norm
// and runs fused kernels; a decoder block puts its MLP's GELU into the GEMM) and
// stores the linear layers' parameters in `dtype`, so no step casts a weight. The
// network must be in eval mode and stay there. Returns how many blocks were frozen.
int freeze_for_inference(torch::nn::Module& network, torch::ScalarType dtype);

// Every max pool runs dvfslab's own kernels where they apply (max_pool.hpp), in
// training and inference. Returns how many pools were switched.
int use_own_pool_kernels(torch::nn::Module& network);

}  // namespace dvfslab::torch_backend
