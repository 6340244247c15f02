#include "workload/torch/token_loss.hpp"

#include <torch/torch.h>

namespace dvfslab::torch_backend {

torch::Tensor mean_token_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets) {
  // The underscored operator, which autocast leaves alone: log_softmax is on its
  // FP32 list and would widen the whole logits tensor first.
  const auto log_probabilities = at::_log_softmax(logits.reshape({-1, logits.size(-1)}), -1, false);
  const auto picked = log_probabilities.gather(1, targets.reshape({-1, 1}));
  return -picked.to(torch::kFloat).mean();
}

}  // namespace dvfslab::torch_backend
