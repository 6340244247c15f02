#include "workload/torch/conv_unit.hpp"

#include <ATen/ATen.h>

#include "dvfslab/error.hpp"
#include "workload/torch/batch_norm_act.hpp"
#include "workload/torch/own_kernels.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {

ConvUnit::ConvUnit(const ConvUnitOptions& options) : geometry_(options.geometry), relu_(options.relu) {
  conv_ = register_module(
      "conv",
      torch::nn::Conv2d(torch::nn::Conv2dOptions(options.in_channels, options.out_channels, options.kernel)
                            .stride(geometry_.stride)
                            .padding(geometry_.padding)
                            .bias(!options.batch_norm_eps)));
  if (options.batch_norm_eps) {
    batch_norm_ = register_module(
        "bn", torch::nn::BatchNorm2d(
                  torch::nn::BatchNorm2dOptions(options.out_channels).eps(*options.batch_norm_eps)));
  }
}

torch::Tensor ConvUnit::convolve(const torch::Tensor& input) {
  auto output = conv_->forward(input);
  return batch_norm_ ? batch_norm_->forward(output) : output;
}

const torch::Tensor& ConvUnit::frozen_weight() const {
  if (is_training())
    throw Error("a convolution unit frozen for inference cannot train; build the network anew");
  return frozen_weight_;
}

torch::Tensor ConvUnit::forward(const torch::Tensor& input) {
  if (frozen_weight_.defined()) {
    const auto& weight = frozen_weight();
    const auto x = input.to(weight.scalar_type());
    if (relu_) return conv_bias_relu(x, weight, frozen_bias_, geometry_);
    return at::conv2d(x, weight, frozen_bias_, geometry_.stride, geometry_.padding);
  }
  if (fused_training_ && is_training() && input.is_cuda()) {
    // Autocast does not reach a custom autograd function: cast as it would.
    const auto dtype = active_autocast_dtype(input.device().type()).value_or(input.scalar_type());
    return trainable_conv_bias_relu(input.to(dtype), conv_->weight.to(dtype), conv_->bias.to(dtype),
                                    geometry_);
  }
  if (own_norm_training_ && is_training())
    return train_batch_norm_act(conv_->forward(input), *batch_norm_, {}, relu_);
  // In place, as torchvision's ReLUs are: no backward needs the value they overwrite.
  auto output = convolve(input);
  return relu_ ? output.relu_() : output;
}

torch::Tensor ConvUnit::forward_add_relu(const torch::Tensor& input, const torch::Tensor& residual) {
  if (frozen_weight_.defined()) {
    const auto& weight = frozen_weight();
    return conv_bias_add_relu(input.to(weight.scalar_type()), weight, frozen_bias_,
                              residual.to(weight.scalar_type()), geometry_);
  }
  if (own_norm_training_ && is_training())
    return train_batch_norm_act(conv_->forward(input), *batch_norm_, residual, true);
  return convolve(input).add_(residual).relu_();
}

bool ConvUnit::fuse_for_training() {
  fused_training_ = !batch_norm_ && relu_;
  own_norm_training_ = batch_norm_ && own_kernels_built();
  return fused_training_ || own_norm_training_;
}

void ConvUnit::freeze(torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  auto weight = conv_->weight.to(torch::kFloat);
  auto bias = conv_->options.bias() ? conv_->bias.to(torch::kFloat)
                                    : torch::zeros({weight.size(0)}, weight.options());
  if (batch_norm_) {
    // Eval-mode batch norm is y = (x - mean) · γ / √(var + ε) + β: a per-channel
    // scale and shift, which the convolution can apply to its weight and bias.
    const auto scale = batch_norm_->weight.to(torch::kFloat) /
                       torch::sqrt(batch_norm_->running_var.to(torch::kFloat) + batch_norm_->options.eps());
    weight = weight * scale.view({-1, 1, 1, 1});
    bias = (bias - batch_norm_->running_mean.to(torch::kFloat)) * scale + batch_norm_->bias.to(torch::kFloat);
  }
  // Always copies, so a frozen unit never depends on the parameters it came from.
  frozen_weight_ = weight.to(dtype, /*non_blocking=*/false, /*copy=*/true)
                       .contiguous(conv_->weight.suggest_memory_format());
  frozen_bias_ = bias.to(dtype, /*non_blocking=*/false, /*copy=*/true);
}

}  // namespace dvfslab::torch_backend
