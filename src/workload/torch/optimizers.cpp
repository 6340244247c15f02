#include "workload/torch/optimizers.hpp"

#include <ATen/ATen.h>

#include "workload/torch/fused_steps.hpp"

namespace dvfslab::torch_backend {
namespace {

std::vector<torch::Tensor> zeros_like_each(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> zeros;
  zeros.reserve(tensors.size());
  for (const auto& tensor : tensors) zeros.push_back(torch::zeros_like(tensor));
  return zeros;
}

}  // namespace

Optimizer::Optimizer(std::vector<torch::Tensor> parameters, StepKernels kernels)
    : parameters_(std::move(parameters)),
      fused_(kernels == StepKernels::fused_where_available && !parameters_.empty() &&
             fused_steps_available(parameters_.front().device())) {}

void Optimizer::zero_grad() {
  for (auto& parameter : parameters_) parameter.mutable_grad() = torch::Tensor();
}

std::vector<torch::Tensor> Optimizer::gradients() const {
  std::vector<torch::Tensor> gradients;
  for (const auto& parameter : parameters_) {
    if (parameter.grad().defined()) gradients.push_back(parameter.grad());
  }
  return gradients;
}

SgdMomentum::SgdMomentum(std::vector<torch::Tensor> parameters, double learning_rate, double momentum,
                         double weight_decay, StepKernels kernels)
    : Optimizer(std::move(parameters), kernels),
      learning_rate_(learning_rate),
      momentum_(momentum),
      weight_decay_(weight_decay),
      // A zero buffer makes the first step's buffer equal the gradient, as PyTorch's lazy copy does.
      momentum_buffers_(zeros_like_each(parameters_)) {}

void SgdMomentum::step() {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parameters, gradients, buffers;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    if (!parameters_[i].grad().defined()) continue;
    parameters.push_back(parameters_[i]);
    gradients.push_back(parameters_[i].grad());
    buffers.push_back(momentum_buffers_[i]);
  }
  if (parameters.empty()) return;
  if (fused_) {
    fused_sgd_momentum_step(parameters, gradients, buffers, learning_rate_, momentum_, weight_decay_);
    return;
  }
  at::_foreach_mul_(buffers, momentum_);
  at::_foreach_add_(buffers, gradients, 1.0);
  if (weight_decay_ != 0.0) at::_foreach_add_(buffers, parameters, weight_decay_);
  at::_foreach_add_(parameters, buffers, -learning_rate_);
}

AdamW::AdamW(std::vector<torch::Tensor> parameters, double learning_rate, double weight_decay,
             StepKernels kernels)
    : Optimizer(std::move(parameters), kernels),
      learning_rate_(learning_rate),
      weight_decay_(weight_decay),
      first_moments_(zeros_like_each(parameters_)),
      second_moments_(zeros_like_each(parameters_)) {
  const auto device = parameters_.empty() ? torch::Device(torch::kCPU) : parameters_.front().device();
  step_count_ = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat).device(device));
}

void AdamW::step() {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parameters, gradients, first, second;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    if (!parameters_[i].grad().defined()) continue;
    parameters.push_back(parameters_[i]);
    gradients.push_back(parameters_[i].grad());
    first.push_back(first_moments_[i]);
    second.push_back(second_moments_[i]);
  }
  if (parameters.empty()) return;
  step_count_.add_(1.0);
  if (fused_) {
    fused_adamw_step(parameters, gradients, first, second, step_count_, learning_rate_, beta1_, beta2_,
                     weight_decay_, epsilon_);
    return;
  }
  // The bias corrections depend on the step count, so they stay device tensors.
  const auto step_size = learning_rate_ / (1.0 - torch::pow(beta1_, step_count_));
  const auto second_correction = torch::sqrt(1.0 - torch::pow(beta2_, step_count_));

  at::_foreach_mul_(parameters, 1.0 - learning_rate_ * weight_decay_);
  at::_foreach_mul_(first, beta1_);
  at::_foreach_add_(first, gradients, 1.0 - beta1_);
  at::_foreach_mul_(second, beta2_);
  at::_foreach_addcmul_(second, gradients, gradients, 1.0 - beta2_);
  auto denominators = at::_foreach_sqrt(second);
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    denominators[i].div_(second_correction).add_(epsilon_);
    parameters[i].sub_(first[i] / denominators[i] * step_size);
  }
}

LossScaler::LossScaler(const torch::Device& device) {
  const auto options = torch::TensorOptions().device(device);
  scale_ = torch::full({}, 65536.0, options.dtype(torch::kFloat));
  growth_tracker_ = torch::zeros({}, options.dtype(torch::kInt));
  found_infinite_ = torch::zeros({}, options.dtype(torch::kFloat));
}

void LossScaler::step(Optimizer& optimizer) {
  torch::NoGradGuard no_grad;
  found_infinite_.zero_();
  auto gradients = optimizer.gradients();
  at::_amp_foreach_non_finite_check_and_unscale_(gradients, found_infinite_, scale_.reciprocal());
  if (found_infinite_.item<float>() == 0.0F) optimizer.step();
  at::_amp_update_scale_(scale_, growth_tracker_, found_infinite_, 2.0, 0.5, 2000);
}

}  // namespace dvfslab::torch_backend
