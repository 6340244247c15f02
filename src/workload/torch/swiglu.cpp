#include "workload/torch/swiglu.hpp"

#include <torch/autograd.h>

#include "workload/torch/own_kernels.hpp"

#if defined(DVFSLAB_OWN_KERNELS)
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "workload/torch/kernels/swiglu_kernels.hpp"
#endif

namespace dvfslab::torch_backend {
namespace {

torch::Tensor aten_swiglu(const torch::Tensor& gate_and_up) {
  const auto halves = gate_and_up.chunk(2, -1);
  return torch::silu(halves[0]) * halves[1];
}

#if defined(DVFSLAB_OWN_KERNELS)
kernels::SwigluShape swiglu_shape(const torch::Tensor& gate_and_up) {
  const auto width = gate_and_up.size(-1) / 2;
  return {gate_and_up.numel() / (2 * width), width};
}

torch::Tensor empty_output(const torch::Tensor& gate_and_up) {
  auto sizes = gate_and_up.sizes().vec();
  sizes.back() /= 2;
  return torch::empty(sizes, gate_and_up.options().memory_format(torch::MemoryFormat::Contiguous));
}

class OwnSwiglu : public torch::autograd::Function<OwnSwiglu> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& gate_and_up) {
    const c10::cuda::CUDAGuard on_device(gate_and_up.device());
    auto output = empty_output(gate_and_up);
    check_kernel_launch(kernels::swiglu_forward(kernel_element_type(gate_and_up.scalar_type()),
                                                swiglu_shape(gate_and_up), gate_and_up.data_ptr(),
                                                output.data_ptr(), at::cuda::getCurrentCUDAStream()),
                        "SwiGLU forward");
    context->save_for_backward({gate_and_up});
    return output;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto gate_and_up = context->get_saved_variables()[0];
    const c10::cuda::CUDAGuard on_device(gate_and_up.device());
    const auto grad_output = dense_for_packs(grad_outputs[0].to(gate_and_up.scalar_type()));
    auto grad_input = torch::empty_like(gate_and_up, torch::MemoryFormat::Contiguous);
    check_kernel_launch(kernels::swiglu_backward(kernel_element_type(gate_and_up.scalar_type()),
                                                 swiglu_shape(gate_and_up), gate_and_up.data_ptr(),
                                                 grad_output.data_ptr(), grad_input.data_ptr(),
                                                 at::cuda::getCurrentCUDAStream()),
                        "SwiGLU backward");
    return {grad_input};
  }
};
#endif

}  // namespace

bool own_swiglu_applies([[maybe_unused]] const torch::Tensor& gate_and_up) {
#if defined(DVFSLAB_OWN_KERNELS)
  if (!gate_and_up.is_cuda() || gate_and_up.dim() == 0 || gate_and_up.numel() == 0 ||
      !kernel_element_type_supported(gate_and_up.scalar_type()) || !gate_and_up.is_contiguous() ||
      !aligned_for_packs(gate_and_up))
    return false;
  const auto lanes = 16 / static_cast<std::int64_t>(gate_and_up.element_size());
  return gate_and_up.size(-1) % (2 * lanes) == 0;
#else
  return false;
#endif
}

torch::Tensor swiglu(const torch::Tensor& gate_and_up) {
#if defined(DVFSLAB_OWN_KERNELS)
  if (own_swiglu_applies(gate_and_up)) return OwnSwiglu::apply(gate_and_up);
#endif
  return aten_swiglu(gate_and_up);
}

}  // namespace dvfslab::torch_backend
