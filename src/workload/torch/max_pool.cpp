#include "workload/torch/max_pool.hpp"

#include <torch/autograd.h>

#include <string>

#include "dvfslab/error.hpp"
#include "workload/torch/own_kernels.hpp"

#if defined(DVFSLAB_OWN_KERNELS)
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "workload/torch/kernels/max_pool_kernels.hpp"
#endif

namespace dvfslab::torch_backend {

std::int64_t pooled_length(std::int64_t length, const MaxPoolOptions& options) {
  const std::int64_t span =
      length + 2 * options.padding - options.kernel + (options.ceil_mode ? options.stride - 1 : 0);
  // Floor division: span is negative when the window is longer than the padded input.
  std::int64_t pooled =
      (span >= 0 ? span / options.stride : -((-span + options.stride - 1) / options.stride)) + 1;
  // With ceil_mode the last window must still start inside the input or its left padding.
  if (options.ceil_mode && (pooled - 1) * options.stride >= length + options.padding) --pooled;
  return pooled;
}

namespace {

torch::Tensor aten_max_pool(const torch::Tensor& input, const MaxPoolOptions& options) {
  return torch::max_pool2d(input, options.kernel, options.stride, options.padding, 1, options.ceil_mode);
}

}  // namespace

torch::Tensor MaxPool::forward(const torch::Tensor& input) {
  return own_kernel_ ? max_pool(input, options_) : aten_max_pool(input, options_);
}

#if defined(DVFSLAB_OWN_KERNELS)
namespace {

kernels::PoolShape pool_shape(const torch::Tensor& input, const MaxPoolOptions& options) {
  return {input.size(0),
          input.size(2),
          input.size(3),
          input.size(1),
          pooled_length(input.size(2), options),
          pooled_length(input.size(3), options),
          options.kernel,
          options.kernel,
          options.stride,
          options.stride,
          options.padding,
          options.padding};
}

// Whether a thread may move 16 bytes of channels at once.
bool vector_fits(const kernels::PoolShape& shape, const torch::Tensor& a, const torch::Tensor& b) {
  return shape.c % (16 / static_cast<std::int64_t>(a.element_size())) == 0 && aligned_for_packs(a) &&
         aligned_for_packs(b);
}

// The pooled output and each output's winning window position.
std::pair<torch::Tensor, torch::Tensor> pool_forward(const torch::Tensor& input,
                                                     const MaxPoolOptions& options, bool keep_argmax) {
  const c10::cuda::CUDAGuard on_device(input.device());
  const kernels::PoolShape shape = pool_shape(input, options);
  auto output = torch::empty({shape.n, shape.c, shape.out_h, shape.out_w},
                             input.options().memory_format(torch::MemoryFormat::ChannelsLast));
  torch::Tensor argmax;
  if (keep_argmax)
    argmax = torch::empty({shape.n, shape.out_h, shape.out_w, shape.c}, input.options().dtype(torch::kByte));
  check_kernel_launch(
      kernels::max_pool_forward(kernel_element_type(input.scalar_type()), shape, input.data_ptr(), output.data_ptr(),
                                keep_argmax ? argmax.data_ptr<std::uint8_t>() : nullptr,
                                vector_fits(shape, input, output), at::cuda::getCurrentCUDAStream()),
      "max pooling forward");
  return {output, argmax};
}

class OwnMaxPool : public torch::autograd::Function<OwnMaxPool> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& input,
                               const MaxPoolOptions& options) {
    auto [output, argmax] = pool_forward(input, options, true);
    context->save_for_backward({argmax});
    context->saved_data["shape"] = input.sizes().vec();
    context->saved_data["options"] =
        std::vector<std::int64_t>{options.kernel, options.stride, options.padding, options.ceil_mode ? 1 : 0};
    return output;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list grad_outputs) {
    const torch::Tensor argmax = context->get_saved_variables()[0];
    const auto sizes = context->saved_data["shape"].toIntVector();
    const auto o = context->saved_data["options"].toIntVector();
    const MaxPoolOptions options{static_cast<int>(o[0]), static_cast<int>(o[1]), static_cast<int>(o[2]),
                                 o[3] != 0};
    const torch::Tensor grad_output = grad_outputs[0].contiguous(torch::MemoryFormat::ChannelsLast);
    const c10::cuda::CUDAGuard on_device(grad_output.device());
    auto grad_input =
        torch::empty(sizes, grad_output.options().memory_format(torch::MemoryFormat::ChannelsLast));
    const kernels::PoolShape shape = pool_shape(grad_input, options);
    check_kernel_launch(kernels::max_pool_backward(
                     kernel_element_type(grad_output.scalar_type()), shape, grad_output.data_ptr(),
                     argmax.data_ptr<std::uint8_t>(), grad_input.data_ptr(),
                     vector_fits(shape, grad_output, grad_input), at::cuda::getCurrentCUDAStream()),
                 "max pooling backward");
    return {grad_input, torch::Tensor()};
  }
};

}  // namespace
#endif

bool own_max_pool_applies(const torch::Tensor& input, const MaxPoolOptions& options) {
#if defined(DVFSLAB_OWN_KERNELS)
  const auto type = input.scalar_type();
  return input.is_cuda() && input.dim() == 4 && input.is_contiguous(torch::MemoryFormat::ChannelsLast) &&
         (type == torch::kFloat || type == torch::kHalf || type == torch::kBFloat16) &&
         options.kernel * options.kernel <= kernels::most_window_positions &&
         options.padding <= options.kernel / 2 && pooled_length(input.size(2), options) > 0 &&
         pooled_length(input.size(3), options) > 0 && input.numel() > 0;
#else
  (void)input;
  (void)options;
  return false;
#endif
}

torch::Tensor max_pool(const torch::Tensor& input, const MaxPoolOptions& options) {
#if defined(DVFSLAB_OWN_KERNELS)
  if (own_max_pool_applies(input, options)) {
    if (torch::GradMode::is_enabled() && input.requires_grad()) return OwnMaxPool::apply(input, options);
    return pool_forward(input, options, false).first;
  }
#endif
  return aten_max_pool(input, options);
}

}  // namespace dvfslab::torch_backend
