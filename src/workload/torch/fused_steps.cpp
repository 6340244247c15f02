#include "workload/torch/fused_steps.hpp"

#include <ATen/ATen.h>

#include "dvfslab/error.hpp"
#include "workload/torch/torch_version.hpp"

#define DVFSLAB_FUSED_STEPS DVFSLAB_TORCH_AT_LEAST(2, 2)

namespace dvfslab::torch_backend {

bool fused_steps_available(const torch::Device& device) { return DVFSLAB_FUSED_STEPS && device.is_cuda(); }

#if DVFSLAB_FUSED_STEPS

void fused_sgd_momentum_step(const std::vector<torch::Tensor>& parameters,
                             const std::vector<torch::Tensor>& gradients,
                             const std::vector<torch::Tensor>& buffers, double learning_rate, double momentum,
                             double weight_decay) {
  at::_fused_sgd_(parameters, gradients, buffers, weight_decay, momentum, learning_rate, /*dampening=*/0.0,
                  /*nesterov=*/false, /*maximize=*/false, /*is_first_step=*/false);
}

void fused_adamw_step(const std::vector<torch::Tensor>& parameters,
                      const std::vector<torch::Tensor>& gradients,
                      const std::vector<torch::Tensor>& first_moments,
                      const std::vector<torch::Tensor>& second_moments, const torch::Tensor& step_count,
                      double learning_rate, double beta1, double beta2, double weight_decay, double epsilon) {
  // The kernel takes one step tensor per parameter; every parameter is at the same step.
  const std::vector<torch::Tensor> steps(parameters.size(), step_count);
  at::_fused_adamw_(parameters, gradients, first_moments, second_moments, /*max_exp_avg_sqs=*/{}, steps,
                    learning_rate, beta1, beta2, weight_decay, epsilon, /*amsgrad=*/false,
                    /*maximize=*/false);
}

#else

namespace {
[[noreturn]] void no_fused_kernels() {
  throw NotSupportedError(
      "this LibTorch has no fused optimizer kernels (they need LibTorch 2.2 or later and CUDA)");
}
}  // namespace

void fused_sgd_momentum_step(const std::vector<torch::Tensor>&, const std::vector<torch::Tensor>&,
                             const std::vector<torch::Tensor>&, double, double, double) {
  no_fused_kernels();
}

void fused_adamw_step(const std::vector<torch::Tensor>&, const std::vector<torch::Tensor>&,
                      const std::vector<torch::Tensor>&, const std::vector<torch::Tensor>&,
                      const torch::Tensor&, double, double, double, double, double) {
  no_fused_kernels();
}

#endif

}  // namespace dvfslab::torch_backend
