#pragma once
// Max pooling whose inference form writes no indices. ATen's CUDA max pooling
// always stores the int64 position of each maximum for a backward pass; in
// channels-last bf16 GoogLeNet's 13 pools took 5.0 of its 9.7 ms inference step on
// the H200 that way (docs/results/h200/kernel_profiles/). Frozen for inference, a
// pool takes each window's maximum as one reduction over a strided view instead.
#include <torch/nn/module.h>
#include <torch/types.h>

#include "workload/torch/layer_fusion.hpp"

namespace dvfslab::torch_backend {

struct MaxPoolOptions {
  int kernel = 2;
  int stride = 2;
  int padding = 0;
  bool ceil_mode = false;
};

// Each window's maximum, as at::max_pool2d computes it (same output size, padding
// never chosen), without indices and without autograd.
torch::Tensor max_pool_without_indices(const torch::Tensor& input, const MaxPoolOptions& options);

class MaxPool : public torch::nn::Module, public FreezableBlock {
 public:
  explicit MaxPool(const MaxPoolOptions& options) : options_(options) {}
  torch::Tensor forward(const torch::Tensor& input);
  int freeze(torch::ScalarType dtype) override;

 private:
  MaxPoolOptions options_;
  bool frozen_ = false;
};

}  // namespace dvfslab::torch_backend
