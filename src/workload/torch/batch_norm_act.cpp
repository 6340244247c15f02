#include "workload/torch/batch_norm_act.hpp"

#include <torch/autograd.h>

#include <optional>
#include <string>

#include "dvfslab/error.hpp"
#include "workload/torch/own_kernels.hpp"

#if defined(DVFSLAB_OWN_KERNELS)
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "workload/torch/kernels/batch_norm_kernels.hpp"
#endif

namespace dvfslab::torch_backend {
namespace {

torch::Tensor aten_batch_norm_act(const torch::Tensor& input, torch::nn::BatchNorm2dImpl& norm,
                                  const torch::Tensor& residual, bool relu) {
  auto output = norm.forward(input);
  if (residual.defined()) output = output.add_(residual);
  // In place, as torchvision's ReLUs are: no backward needs the value they overwrite.
  return relu ? output.relu_() : output;
}

#if defined(DVFSLAB_OWN_KERNELS)
// What the forward needs besides the tensors autograd tracks.
struct NormSettings {
  torch::Tensor running_mean, running_var;
  double momentum = 0.1;
  double eps = 1e-5;
  bool relu = true;
};

kernels::HalfType half_type(const torch::Tensor& t) {
  return t.scalar_type() == torch::kBFloat16 ? kernels::HalfType::bfloat16 : kernels::HalfType::float16;
}

kernels::NormShape norm_shape(const torch::Tensor& t) {
  return {t.size(0) * t.size(2) * t.size(3), t.size(1)};
}

torch::Tensor floats(std::int64_t count, const torch::Tensor& like) {
  return torch::empty({count},
                      like.options().dtype(torch::kFloat).memory_format(torch::MemoryFormat::Contiguous));
}

class OwnBatchNormAct : public torch::autograd::Function<OwnBatchNormAct> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& input,
                               const torch::Tensor& weight, const torch::Tensor& bias,
                               const std::optional<torch::Tensor>& residual, const NormSettings& settings) {
    const c10::cuda::CUDAGuard on_device(input.device());
    const kernels::NormShape shape = norm_shape(input);
    auto output = torch::empty_like(input, torch::MemoryFormat::ChannelsLast);
    auto mean = floats(shape.channels, input);
    auto inverse_std = floats(shape.channels, input);
    auto workspace = floats(kernels::NormWorkspace::floats(shape), input);
    torch::Tensor relu_mask;
    if (settings.relu)
      relu_mask =
          torch::empty({kernels::relu_mask_bytes(shape)},
                       input.options().dtype(torch::kUInt8).memory_format(torch::MemoryFormat::Contiguous));
    kernels::NormForward args;
    args.input = input.data_ptr();
    args.residual = residual ? residual->data_ptr() : nullptr;
    args.weight = weight.data_ptr<float>();
    args.bias = bias.data_ptr<float>();
    args.running_mean = settings.running_mean.data_ptr<float>();
    args.running_var = settings.running_var.data_ptr<float>();
    args.saved_mean = mean.data_ptr<float>();
    args.saved_inverse_std = inverse_std.data_ptr<float>();
    args.output = output.data_ptr();
    args.relu_mask = relu_mask.defined() ? relu_mask.data_ptr<std::uint8_t>() : nullptr;
    args.workspace = workspace.data_ptr<float>();
    args.momentum = settings.momentum;
    args.eps = settings.eps;
    args.relu = settings.relu;
    check_kernel_launch(
        kernels::batch_norm_act_forward(half_type(input), shape, args, at::cuda::getCurrentCUDAStream()),
        "batch norm forward");
    // The mask, not the output: the backward reads one bit of it per element.
    context->save_for_backward({input, relu_mask, weight, mean, inverse_std});
    context->saved_data["residual"] = residual.has_value();
    return output;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = context->get_saved_variables();
    const torch::Tensor& input = saved[0];
    const c10::cuda::CUDAGuard on_device(input.device());
    const auto grad_output =
        grad_outputs[0].to(input.scalar_type()).contiguous(torch::MemoryFormat::ChannelsLast);
    const kernels::NormShape shape = norm_shape(input);
    auto grad_input = torch::empty_like(input, torch::MemoryFormat::ChannelsLast);
    torch::Tensor grad_residual;
    if (context->saved_data["residual"].toBool())
      grad_residual = torch::empty_like(input, torch::MemoryFormat::ChannelsLast);
    auto grad_weight = floats(shape.channels, input);
    auto grad_bias = floats(shape.channels, input);
    auto workspace = floats(kernels::NormWorkspace::floats(shape), input);
    kernels::NormBackward args;
    args.grad_output = grad_output.data_ptr();
    args.input = input.data_ptr();
    args.relu_mask = saved[1].defined() ? saved[1].data_ptr<std::uint8_t>() : nullptr;
    args.weight = saved[2].data_ptr<float>();
    args.saved_mean = saved[3].data_ptr<float>();
    args.saved_inverse_std = saved[4].data_ptr<float>();
    args.grad_input = grad_input.data_ptr();
    args.grad_residual = grad_residual.defined() ? grad_residual.data_ptr() : nullptr;
    args.grad_weight = grad_weight.data_ptr<float>();
    args.grad_bias = grad_bias.data_ptr<float>();
    args.workspace = workspace.data_ptr<float>();
    check_kernel_launch(
        kernels::batch_norm_act_backward(half_type(input), shape, args, at::cuda::getCurrentCUDAStream()),
        "batch norm backward");
    return {grad_input, grad_weight, grad_bias, grad_residual, torch::Tensor()};
  }
};
#endif

}  // namespace

bool own_batch_norm_applies(const torch::Tensor& input, const torch::nn::BatchNorm2dImpl& norm,
                            const torch::Tensor& residual) {
  if (!own_kernels_built() || !input.is_cuda() || input.dim() != 4 || input.numel() == 0) return false;
  const auto type = input.scalar_type();
  if ((type != torch::kBFloat16 && type != torch::kHalf) || input.size(1) % 8 != 0 ||
      !input.is_contiguous(torch::MemoryFormat::ChannelsLast) || !aligned_for_packs(input))
    return false;
  if (residual.defined() &&
      (residual.scalar_type() != type || residual.sizes() != input.sizes() ||
       !residual.is_contiguous(torch::MemoryFormat::ChannelsLast) || !aligned_for_packs(residual)))
    return false;
  const auto& o = norm.options;
  const auto float_vector = [&](const torch::Tensor& t) {
    return t.defined() && t.scalar_type() == torch::kFloat && t.is_contiguous() &&
           t.device() == input.device() && t.numel() == input.size(1);
  };
  return o.affine() && o.track_running_stats() && o.momentum().has_value() && float_vector(norm.weight) &&
         float_vector(norm.bias) && float_vector(norm.running_mean) && float_vector(norm.running_var);
}

torch::Tensor train_batch_norm_act(const torch::Tensor& input, torch::nn::BatchNorm2dImpl& norm,
                                   const torch::Tensor& residual, bool relu) {
#if defined(DVFSLAB_OWN_KERNELS)
  if (norm.is_training() && own_batch_norm_applies(input, norm, residual)) {
    {
      torch::NoGradGuard no_grad;
      norm.num_batches_tracked.add_(1);
    }
    const NormSettings settings{norm.running_mean, norm.running_var, *norm.options.momentum(),
                                norm.options.eps(), relu};
    // An undefined tensor cannot be an autograd input: no residual is nullopt.
    const auto maybe_residual = residual.defined() ? std::optional<torch::Tensor>(residual) : std::nullopt;
    return OwnBatchNormAct::apply(input, norm.weight, norm.bias, maybe_residual, settings);
  }
#endif
  return aten_batch_norm_act(input, norm, residual, relu);
}

}  // namespace dvfslab::torch_backend
