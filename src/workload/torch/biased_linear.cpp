#include "workload/torch/biased_linear.hpp"

#include <torch/autograd.h>

#include "workload/torch/autocast_operand.hpp"
#include "workload/torch/own_kernels.hpp"

#if defined(DVFSLAB_OWN_KERNELS)
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "workload/torch/kernels/bias_gradient_kernels.hpp"
#endif

namespace dvfslab::torch_backend {
namespace {

#if defined(DVFSLAB_OWN_KERNELS)
// The products are ATen's as linear's backward computes them; only the bias's sum
// is dvfslab's.
class OwnBiasGradientLinear : public torch::autograd::Function<OwnBiasGradientLinear> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& input,
                               const torch::Tensor& weight, const torch::Tensor& bias) {
    context->save_for_backward({input, weight, bias});
    return torch::linear(input, weight, bias.to(input.scalar_type()));
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = context->get_saved_variables();
    const auto& input = saved[0];
    const auto& weight = saved[1];
    const auto& bias = saved[2];
    const c10::cuda::CUDAGuard on_device(input.device());
    const auto width = weight.size(0);
    const auto grad = dense_for_packs(grad_outputs[0].to(input.scalar_type()).reshape({-1, width}));
    torch::Tensor grad_input, grad_weight, grad_bias;
    if (context->needs_input_grad(0)) grad_input = grad.mm(weight).view(input.sizes());
    if (context->needs_input_grad(1)) grad_weight = grad.t().mm(input.reshape({-1, input.size(-1)}));
    if (context->needs_input_grad(2)) {
      grad_bias = torch::empty_like(bias, torch::MemoryFormat::Contiguous);
      const auto rows = grad.size(0);
      auto scratch =
          torch::empty({kernels::bias_gradient_scratch(rows, width)}, grad.options().dtype(torch::kFloat));
      check_kernel_launch(kernels::bias_gradient(kernel_element_type(grad.scalar_type()),
                                                 kernel_element_type(bias.scalar_type()), rows, width,
                                                 grad.data_ptr(), grad_bias.data_ptr(),
                                                 scratch.data_ptr<float>(), at::cuda::getCurrentCUDAStream()),
                          "bias gradient");
    }
    return {grad_input, grad_weight, grad_bias};
  }
};

bool is_16_bit(const torch::Tensor& tensor) {
  return tensor.scalar_type() == torch::kHalf || tensor.scalar_type() == torch::kBFloat16;
}
#endif

}  // namespace

bool own_bias_gradient_applies([[maybe_unused]] const torch::Tensor& input,
                               [[maybe_unused]] const torch::Tensor& weight,
                               [[maybe_unused]] const torch::Tensor& bias) {
#if defined(DVFSLAB_OWN_KERNELS)
  if (!torch::GradMode::is_enabled() || !bias.defined() ||
      !(input.requires_grad() || weight.requires_grad() || bias.requires_grad()))
    return false;
  if (!input.is_cuda() || input.dim() < 1 || input.numel() == 0 || !is_16_bit(input) || weight.dim() != 2 ||
      weight.scalar_type() != input.scalar_type() || weight.device() != input.device())
    return false;
  return weight.size(0) % 4 == 0 && bias.dim() == 1 && bias.size(0) == weight.size(0) &&
         kernel_element_type_supported(bias.scalar_type()) && bias.device() == input.device();
#else
  return false;
#endif
}

torch::Tensor biased_linear(const torch::Tensor& input, const torch::Tensor& weight,
                            const torch::Tensor& bias) {
#if defined(DVFSLAB_OWN_KERNELS)
  if (own_bias_gradient_applies(input, weight, bias))
    return OwnBiasGradientLinear::apply(input, weight, bias);
#endif
  if (!bias.defined()) return torch::linear(input, weight);
  return torch::linear(input, weight,
                       bias.scalar_type() == input.scalar_type() ? bias : cast_to(bias, input.scalar_type()));
}

}  // namespace dvfslab::torch_backend
