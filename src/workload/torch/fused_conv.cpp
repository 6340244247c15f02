#include "workload/torch/fused_conv.hpp"

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/cuda.h>

#include <array>

namespace dvfslab::torch_backend {
namespace {

using Pair = std::array<std::int64_t, 2>;

Pair square(std::int64_t value) { return {value, value}; }
constexpr Pair no_dilation = {1, 1};
constexpr std::int64_t single_group = 1;

bool cudnn_fusable(const torch::Tensor& input) {
  if (!input.is_cuda() || !at::globalContext().userEnabledCuDNN() || !torch::cuda::cudnn_is_available())
    return false;
  const auto type = input.scalar_type();
  return type == torch::kFloat || type == torch::kHalf || type == torch::kBFloat16;
}

class ConvBiasReluFunction : public torch::autograd::Function<ConvBiasReluFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& input,
                               const torch::Tensor& weight, const torch::Tensor& bias, std::int64_t stride,
                               std::int64_t padding) {
    auto output = conv_bias_relu(input, weight, bias, {stride, padding});
    context->save_for_backward({input, weight, output});
    context->saved_data["stride"] = stride;
    context->saved_data["padding"] = padding;
    return output;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list output_gradients) {
    const auto saved = context->get_saved_variables();
    const auto& input = saved[0];
    const auto& weight = saved[1];
    const auto& output = saved[2];
    // ReLU passes the gradient where its output is positive: the output alone
    // decides, so the pre-activation never has to be kept.
    const auto masked = at::threshold_backward(output_gradients[0], output, 0);
    const std::array<std::int64_t, 1> bias_sizes = {weight.size(0)};
    const Pair no_output_padding = {0, 0};
    auto [input_gradient, weight_gradient, bias_gradient] = at::convolution_backward(
        masked, input, weight, at::IntArrayRef(bias_sizes), square(context->saved_data["stride"].toInt()),
        square(context->saved_data["padding"].toInt()), no_dilation, /*transposed=*/false, no_output_padding,
        single_group,
        {context->needs_input_grad(0), context->needs_input_grad(1), context->needs_input_grad(2)});
    return {input_gradient, weight_gradient, bias_gradient, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor conv_bias_relu(const torch::Tensor& input, const torch::Tensor& weight,
                             const torch::Tensor& bias, ConvGeometry geometry) {
  const auto stride = square(geometry.stride);
  const auto padding = square(geometry.padding);
  if (cudnn_fusable(input)) {
    return at::cudnn_convolution_relu(input, weight, bias, stride, padding, no_dilation, single_group);
  }
  return at::conv2d(input, weight, bias, stride, padding, no_dilation, single_group).relu_();
}

torch::Tensor conv_bias_add_relu(const torch::Tensor& input, const torch::Tensor& weight,
                                 const torch::Tensor& bias, const torch::Tensor& residual,
                                 ConvGeometry geometry) {
  const auto stride = square(geometry.stride);
  const auto padding = square(geometry.padding);
  if (cudnn_fusable(input)) {
    return at::cudnn_convolution_add_relu(input, weight, residual, /*alpha=*/1.0, bias, stride, padding,
                                          no_dilation, single_group);
  }
  return at::conv2d(input, weight, bias, stride, padding, no_dilation, single_group).add_(residual).relu_();
}

torch::Tensor trainable_conv_bias_relu(const torch::Tensor& input, const torch::Tensor& weight,
                                       const torch::Tensor& bias, ConvGeometry geometry) {
  return ConvBiasReluFunction::apply(input, weight, bias, geometry.stride, geometry.padding);
}

}  // namespace dvfslab::torch_backend
