#pragma once
// A convolution with its optional batch norm and ReLU: the unit the four built-in
// CNNs are made of. By default it runs layer by layer, as the reference models do.
// Two switches make it run fused kernels (fused_conv.hpp) instead:
//  - fuse_for_training(): a unit without batch norm runs convolution + bias + ReLU
//    forward as one call, with a hand-written backward; a unit with batch norm runs
//    batch norm + ReLU (+ residual) by dvfslab's own kernels (batch_norm_act.hpp)
//    when the build has them;
//  - freeze(): for inference, batch norm is folded into the convolution's weight
//    and bias, which are then stored once in the compute precision.
#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>

#include <memory>
#include <optional>

#include "workload/torch/fused_conv.hpp"
#include "workload/torch/layer_fusion.hpp"

namespace dvfslab::torch_backend {

struct ConvUnitOptions {
  int in_channels = 0;
  int out_channels = 0;
  int kernel = 1;
  ConvGeometry geometry;
  // Batch norm with this epsilon after the convolution, which then has no bias.
  std::optional<double> batch_norm_eps;
  bool relu = true;
};

class ConvUnit : public torch::nn::Module, public FreezableBlock {
 public:
  // Registers "conv" and, with batch norm, "bn" (parameters drawn in that order).
  explicit ConvUnit(const ConvUnitOptions& options);

  torch::Tensor forward(const torch::Tensor& input);
  // relu(convolution (+ batch norm) + residual), whatever the unit's own ReLU
  // setting: how a residual block ends.
  torch::Tensor forward_add_relu(const torch::Tensor& input, const torch::Tensor& residual);

  // On CUDA, runs the training forward of convolution + bias + ReLU as one fused
  // call (units without batch norm that end in ReLU), or batch norm and what follows
  // it by the own kernels (units with batch norm, when built); says whether it did.
  bool fuse_for_training();
  // Folds batch norm into the convolution (computed in FP32, stored in `dtype`)
  // and runs fused kernels from then on. Inference only: a frozen unit refuses to
  // run in training mode.
  void freeze(torch::ScalarType dtype) override;

 private:
  torch::Tensor convolve(const torch::Tensor& input);
  const torch::Tensor& frozen_weight() const;

  torch::nn::Conv2d conv_{nullptr};
  torch::nn::BatchNorm2d batch_norm_{nullptr};
  ConvGeometry geometry_;
  bool relu_;
  bool fused_training_ = false;
  bool own_norm_training_ = false;
  torch::Tensor frozen_weight_, frozen_bias_;
};

// A convolution with bias followed by ReLU (AlexNet's and VGG's layers).
inline std::shared_ptr<ConvUnit> conv_relu(int in, int out, int kernel, std::int64_t stride,
                                           std::int64_t padding) {
  return std::make_shared<ConvUnit>(ConvUnitOptions{in, out, kernel, {stride, padding}, std::nullopt, true});
}

}  // namespace dvfslab::torch_backend
