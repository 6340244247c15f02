#include "workload/torch/rotary.hpp"

#include <torch/autograd.h>

#include "workload/torch/own_kernels.hpp"

#if defined(DVFSLAB_OWN_KERNELS)
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "workload/torch/kernels/rotary_kernels.hpp"
#endif

namespace dvfslab::torch_backend {
namespace {

// The rotated half written as roll(x)·signed_sin, one copy instead of a negation
// and a concatenation.
torch::Tensor aten_rotary_embedding(const torch::Tensor& x, const torch::Tensor& cos,
                                    const torch::Tensor& signed_sin) {
  const auto dtype = x.scalar_type();
  const auto per_token = [&](const torch::Tensor& table) { return table.to(dtype).unsqueeze(1); };
  return torch::addcmul(x * per_token(cos), torch::roll(x, x.size(-1) / 2, -1), per_token(signed_sin));
}

#if defined(DVFSLAB_OWN_KERNELS)
bool packs_fit(const torch::Tensor& x) {
  const auto lanes = 16 / static_cast<std::int64_t>(x.element_size());
  return x.stride(3) == 1 && (x.size(3) / 2) % lanes == 0 && x.stride(0) % lanes == 0 &&
         x.stride(1) % lanes == 0 && x.stride(2) % lanes == 0 && aligned_for_packs(x);
}

kernels::RotaryStrides strides_of(const torch::Tensor& x) { return {x.stride(0), x.stride(1), x.stride(2)}; }

// `rotated` = the rotation of `source` (transposed for the backward).
void launch(const torch::Tensor& source, torch::Tensor& rotated, const torch::Tensor& cos,
            const torch::Tensor& signed_sin, bool transpose) {
  const kernels::RotaryShape shape{source.size(0), source.size(1), source.size(2), source.size(3)};
  kernels::RotaryArgs args;
  args.input = source.data_ptr();
  args.input_strides = strides_of(source);
  args.output = rotated.data_ptr();
  args.output_strides = strides_of(rotated);
  args.cos = cos.data_ptr<float>();
  args.signed_sin = signed_sin.data_ptr<float>();
  args.transpose = transpose;
  check_kernel_launch(kernels::rotary_embedding(kernel_element_type(source.scalar_type()), shape, args,
                                                at::cuda::getCurrentCUDAStream()),
                      transpose ? "rotary embedding backward" : "rotary embedding forward");
}

class OwnRotaryEmbedding : public torch::autograd::Function<OwnRotaryEmbedding> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& x,
                               const torch::Tensor& cos, const torch::Tensor& signed_sin) {
    const c10::cuda::CUDAGuard on_device(x.device());
    auto rotated = torch::empty(x.sizes(), x.options().memory_format(torch::MemoryFormat::Contiguous));
    launch(x, rotated, cos, signed_sin, false);
    context->save_for_backward({cos, signed_sin});
    return rotated;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = context->get_saved_variables();
    auto grad = grad_outputs[0];
    const c10::cuda::CUDAGuard on_device(grad.device());
    if (!packs_fit(grad)) grad = grad.contiguous();
    auto grad_input = torch::empty(grad.sizes(), grad.options().memory_format(torch::MemoryFormat::Contiguous));
    launch(grad, grad_input, saved[0], saved[1], true);
    return {grad_input, torch::Tensor(), torch::Tensor()};
  }
};
#endif

}  // namespace

bool own_rotary_applies([[maybe_unused]] const torch::Tensor& x, [[maybe_unused]] const torch::Tensor& cos,
                        [[maybe_unused]] const torch::Tensor& signed_sin) {
#if defined(DVFSLAB_OWN_KERNELS)
  if (!x.is_cuda() || x.dim() != 4 || x.numel() == 0 || !kernel_element_type_supported(x.scalar_type()) ||
      !packs_fit(x))
    return false;
  const auto table_fits = [&](const torch::Tensor& table) {
    return table.scalar_type() == torch::kFloat && table.device() == x.device() && table.is_contiguous() &&
           table.dim() == 2 && table.size(0) == x.size(1) && table.size(1) == x.size(3);
  };
  return table_fits(cos) && table_fits(signed_sin);
#else
  return false;
#endif
}

torch::Tensor rotary_embedding(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& signed_sin) {
#if defined(DVFSLAB_OWN_KERNELS)
  if (own_rotary_applies(x, cos, signed_sin)) return OwnRotaryEmbedding::apply(x, cos, signed_sin);
#endif
  return aten_rotary_embedding(x, cos, signed_sin);
}

}  // namespace dvfslab::torch_backend
