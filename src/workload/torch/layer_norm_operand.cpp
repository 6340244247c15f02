#include "workload/torch/layer_norm_operand.hpp"

#include <torch/autograd.h>

#include <optional>
#include <utility>

#include "workload/torch/autocast_operand.hpp"
#include "workload/torch/own_kernels.hpp"
#include "workload/torch/torch_compat.hpp"

#if defined(DVFSLAB_OWN_KERNELS)
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "workload/torch/kernels/layer_norm_kernels.hpp"
#endif

namespace dvfslab::torch_backend {
namespace {

#if defined(DVFSLAB_OWN_KERNELS)
kernels::LayerNormShape layer_norm_shape(const torch::Tensor& input) {
  const auto width = input.size(-1);
  return {input.numel() / width, width};
}

// What the forward kernel made: the sum (with a branch), the output and the rows'
// statistics.
struct Normalised {
  torch::Tensor sum, output, mean, inverse_std;
};

// The layer norm of `input`, or of input + branch when `branch` is defined.
Normalised normalise(const torch::Tensor& input, const torch::Tensor& branch, const torch::Tensor& gain,
                     const torch::Tensor& bias, double epsilon, torch::ScalarType output_type) {
  const c10::cuda::CUDAGuard on_device(input.device());
  const auto shape = layer_norm_shape(input);
  const auto statistics = input.options().dtype(torch::kFloat);
  Normalised result{torch::Tensor(), torch::empty(input.sizes(), input.options().dtype(output_type)),
                    torch::empty({shape.rows}, statistics), torch::empty({shape.rows}, statistics)};
  kernels::LayerNormForward args;
  args.input = input.data_ptr();
  if (branch.defined()) {
    result.sum = torch::empty_like(input, torch::MemoryFormat::Contiguous);
    args.branch = branch.data_ptr();
    args.sum = result.sum.data_ptr();
  }
  args.gain = gain.data_ptr();
  args.bias = bias.data_ptr();
  args.output = result.output.data_ptr();
  args.mean = result.mean.data_ptr<float>();
  args.inverse_std = result.inverse_std.data_ptr<float>();
  args.epsilon = static_cast<float>(epsilon);
  check_kernel_launch(
      kernels::layer_norm_forward(kernel_element_type(input.scalar_type()), kernel_element_type(output_type),
                                  shape, args, at::cuda::getCurrentCUDAStream()),
      "layer norm forward");
  return result;
}

// The gradients of the tensor normalised (its direct gradient `grad_sum` added,
// when defined), of a branch (when asked for), of the gain and of the bias.
struct NormGradients {
  torch::Tensor input, branch, gain, bias;
};

NormGradients normalise_backward(const torch::autograd::variable_list& saved, torch::ScalarType output_type,
                                 torch::Tensor grad_output, const torch::Tensor& grad_sum, bool with_branch) {
  const auto& normalised = saved[0];
  const auto& gain = saved[1];
  const c10::cuda::CUDAGuard on_device(normalised.device());
  grad_output = grad_output.defined()
                    ? dense_for_packs(grad_output.to(output_type))
                    : torch::zeros_like(normalised, normalised.options().dtype(output_type));
  const auto direct =
      grad_sum.defined() ? dense_for_packs(grad_sum.to(normalised.scalar_type())) : torch::Tensor();
  const auto shape = layer_norm_shape(normalised);
  NormGradients gradients{torch::empty_like(normalised, torch::MemoryFormat::Contiguous), torch::Tensor(),
                          torch::empty_like(gain, torch::MemoryFormat::Contiguous),
                          torch::empty_like(gain, torch::MemoryFormat::Contiguous)};
  auto scratch =
      torch::empty({kernels::layer_norm_backward_scratch(shape)}, normalised.options().dtype(torch::kFloat));
  kernels::LayerNormBackward args;
  args.grad_output = grad_output.data_ptr();
  if (direct.defined()) args.grad_sum = direct.data_ptr();
  args.input = normalised.data_ptr();
  args.gain = gain.data_ptr();
  args.mean = saved[2].data_ptr<float>();
  args.inverse_std = saved[3].data_ptr<float>();
  args.grad_input = gradients.input.data_ptr();
  if (with_branch) {
    gradients.branch = torch::empty_like(grad_output, torch::MemoryFormat::Contiguous);
    args.grad_branch = gradients.branch.data_ptr();
  }
  args.grad_gain = gradients.gain.data_ptr();
  args.grad_bias = gradients.bias.data_ptr();
  args.scratch = scratch.data_ptr<float>();
  check_kernel_launch(kernels::layer_norm_backward(kernel_element_type(normalised.scalar_type()),
                                                   kernel_element_type(output_type), shape, args,
                                                   at::cuda::getCurrentCUDAStream()),
                      "layer norm backward");
  return gradients;
}

torch::ScalarType saved_output_type(torch::autograd::AutogradContext* context) {
  return static_cast<torch::ScalarType>(context->saved_data["output_type"].toInt());
}

class OwnLayerNorm : public torch::autograd::Function<OwnLayerNorm> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& input,
                               const torch::Tensor& gain, const torch::Tensor& bias, double epsilon,
                               std::int64_t output_type) {
    auto result =
        normalise(input, torch::Tensor(), gain, bias, epsilon, static_cast<torch::ScalarType>(output_type));
    context->save_for_backward({input, gain, result.mean, result.inverse_std});
    context->saved_data["output_type"] = output_type;
    return result.output;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto gradients = normalise_backward(context->get_saved_variables(), saved_output_type(context),
                                              grad_outputs[0], torch::Tensor(), /*with_branch=*/false);
    return {gradients.input, gradients.gain, gradients.bias, torch::Tensor(), torch::Tensor()};
  }
};

// Outputs {stream + branch, the layer norm of that sum}.
class OwnResidualLayerNorm : public torch::autograd::Function<OwnResidualLayerNorm> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* context,
                                                const torch::Tensor& stream, const torch::Tensor& branch,
                                                const torch::Tensor& gain, const torch::Tensor& bias,
                                                double epsilon, std::int64_t output_type) {
    auto result = normalise(stream, branch, gain, bias, epsilon, static_cast<torch::ScalarType>(output_type));
    context->save_for_backward({result.sum, gain, result.mean, result.inverse_std});
    context->saved_data["output_type"] = output_type;
    return {result.sum, result.output};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto gradients = normalise_backward(context->get_saved_variables(), saved_output_type(context),
                                              grad_outputs[1], grad_outputs[0], /*with_branch=*/true);
    return {gradients.input, gradients.branch, gradients.gain,
            gradients.bias,  torch::Tensor(),  torch::Tensor()};
  }
};

bool is_dense_vector(const torch::Tensor& tensor, std::int64_t length, torch::ScalarType type) {
  return tensor.defined() && tensor.dim() == 1 && tensor.size(0) == length && tensor.scalar_type() == type &&
         tensor.is_contiguous() && aligned_for_packs(tensor);
}
#endif

// The output type the norm's operand takes: autocast's, when it is on for an FP32 input.
std::optional<torch::ScalarType> operand_type(const torch::Tensor& input) {
  const auto type = active_autocast_dtype(input.device().type());
  if (!type || input.scalar_type() != torch::kFloat) return std::nullopt;
  return type;
}

bool plain_affine(const torch::nn::LayerNorm& norm) {
  return norm->options.normalized_shape().size() == 1 && norm->options.elementwise_affine();
}

}  // namespace

bool own_layer_norm_applies([[maybe_unused]] const torch::Tensor& input,
                            [[maybe_unused]] const torch::Tensor& gain,
                            [[maybe_unused]] const torch::Tensor& bias) {
#if defined(DVFSLAB_OWN_KERNELS)
  if (!input.defined() || !input.is_cuda() || input.dim() == 0 || input.numel() == 0 ||
      !kernel_element_type_supported(input.scalar_type()) || !input.is_contiguous() ||
      !aligned_for_packs(input))
    return false;
  const auto width = input.size(-1);
  return width % 4 == 0 && is_dense_vector(gain, width, input.scalar_type()) &&
         is_dense_vector(bias, width, input.scalar_type()) && gain.device() == input.device() &&
         bias.device() == input.device();
#else
  return false;
#endif
}

torch::Tensor layer_norm_to(const torch::Tensor& input, const torch::Tensor& gain, const torch::Tensor& bias,
                            double epsilon, torch::ScalarType output_type) {
#if defined(DVFSLAB_OWN_KERNELS)
  if (own_layer_norm_applies(input, gain, bias) && kernel_element_type_supported(output_type))
    return OwnLayerNorm::apply(input, gain, bias, epsilon, static_cast<std::int64_t>(output_type));
#endif
  return cast_to(torch::layer_norm(input, {input.size(-1)}, gain, bias, epsilon), output_type);
}

torch::Tensor layer_norm_operand(torch::nn::LayerNorm norm, const torch::Tensor& input) {
  const auto type = operand_type(input);
  if (!type) return norm->forward(input);
  if (!plain_affine(norm)) return autocast_operand(norm->forward(input));
  return layer_norm_to(input, norm->weight, norm->bias, norm->options.eps(), *type);
}

std::pair<torch::Tensor, torch::Tensor> residual_layer_norm_operand(const torch::Tensor& stream,
                                                                    const torch::Tensor& branch,
                                                                    torch::nn::LayerNorm norm) {
#if defined(DVFSLAB_OWN_KERNELS)
  const auto type = operand_type(stream);
  if (type && plain_affine(norm) && branch.scalar_type() == *type && branch.sizes() == stream.sizes() &&
      branch.is_contiguous() && aligned_for_packs(branch) &&
      own_layer_norm_applies(stream, norm->weight, norm->bias) && kernel_element_type_supported(*type)) {
    auto outputs = OwnResidualLayerNorm::apply(stream, branch, norm->weight, norm->bias, norm->options.eps(),
                                               static_cast<std::int64_t>(*type));
    return {outputs[0], outputs[1]};
  }
#endif
  auto sum = stream + branch;
  auto operand = layer_norm_operand(norm, sum);
  return {std::move(sum), std::move(operand)};
}

}  // namespace dvfslab::torch_backend
