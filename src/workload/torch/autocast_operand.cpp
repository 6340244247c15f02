#include "workload/torch/autocast_operand.hpp"

#include <torch/autograd.h>

#include "workload/torch/own_kernels.hpp"
#include "workload/torch/torch_compat.hpp"

#if defined(DVFSLAB_OWN_KERNELS)
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "workload/torch/kernels/cast_kernels.hpp"
#endif

namespace dvfslab::torch_backend {
namespace {

#if defined(DVFSLAB_OWN_KERNELS)
torch::Tensor converted_on_device(const torch::Tensor& tensor, torch::ScalarType type) {
  const auto source = dense_for_packs(tensor);
  auto result = torch::empty(source.sizes(), source.options().dtype(type));
  check_kernel_launch(kernels::cast_elements(kernel_element_type(source.scalar_type()),
                                             kernel_element_type(type), source.numel(), source.data_ptr(),
                                             result.data_ptr(), at::cuda::getCurrentCUDAStream()),
                      "element cast");
  return result;
}

class OwnCast : public torch::autograd::Function<OwnCast> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& input,
                               std::int64_t type) {
    const c10::cuda::CUDAGuard on_device(input.device());
    context->saved_data["source_type"] = static_cast<std::int64_t>(input.scalar_type());
    return converted_on_device(input, static_cast<torch::ScalarType>(type));
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto& grad = grad_outputs[0];
    if (!grad.defined()) return {torch::Tensor(), torch::Tensor()};
    const c10::cuda::CUDAGuard on_device(grad.device());
    const auto source_type = static_cast<torch::ScalarType>(context->saved_data["source_type"].toInt());
    return {converted_on_device(grad, source_type), torch::Tensor()};
  }
};
#endif

}  // namespace

bool own_cast_applies([[maybe_unused]] const torch::Tensor& tensor) {
#if defined(DVFSLAB_OWN_KERNELS)
  return tensor.defined() && tensor.is_cuda() && tensor.numel() > 0 &&
         kernel_element_type_supported(tensor.scalar_type()) && tensor.is_contiguous() &&
         aligned_for_packs(tensor);
#else
  return false;
#endif
}

torch::Tensor cast_to(const torch::Tensor& tensor, torch::ScalarType type) {
  if (tensor.scalar_type() == type) return tensor;
#if defined(DVFSLAB_OWN_KERNELS)
  if (own_cast_applies(tensor) && kernel_element_type_supported(type))
    return OwnCast::apply(tensor, static_cast<std::int64_t>(type));
#endif
  return tensor.to(type);
}

torch::Tensor autocast_operand(const torch::Tensor& tensor) {
  if (!tensor.defined() || tensor.scalar_type() != torch::kFloat) return tensor;
  const auto type = active_autocast_dtype(tensor.device().type());
  return type ? cast_to(tensor, *type) : tensor;
}

}  // namespace dvfslab::torch_backend
