#pragma once
// Max pooling as the built-in CNNs use it. By default ATen's kernel, as the
// reference models run; use_own_kernel() (what fusion switches on, layer_fusion.hpp)
// sends channels-last CUDA inputs to dvfslab's own kernels
// (kernels/max_pool_kernels.hpp) when the build has them, and anything else to ATen.
#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>

namespace dvfslab::torch_backend {

struct MaxPoolOptions {
  int kernel = 2;
  int stride = 2;
  int padding = 0;
  bool ceil_mode = false;
};

// Output length of one axis of `length` inputs, as ATen computes it.
std::int64_t pooled_length(std::int64_t length, const MaxPoolOptions& options);

// Whether max_pool would run dvfslab's kernels on `input` (not ATen's).
bool own_max_pool_applies(const torch::Tensor& input, const MaxPoolOptions& options);

// max_pool2d of `input`, by dvfslab's kernels where own_max_pool_applies, else by
// ATen; with autograd either way.
torch::Tensor max_pool(const torch::Tensor& input, const MaxPoolOptions& options);

class MaxPool : public torch::nn::Module {
 public:
  explicit MaxPool(const MaxPoolOptions& options) : options_(options) {}
  torch::Tensor forward(const torch::Tensor& input);
  void use_own_kernel() { own_kernel_ = true; }

 private:
  MaxPoolOptions options_;
  bool own_kernel_ = false;
};

}  // namespace dvfslab::torch_backend
