#include "workload/torch/token_loss.hpp"

#include <torch/torch.h>

namespace dvfslab::torch_backend {

torch::Tensor mean_token_cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets) {
  const auto log_probabilities = torch::log_softmax(logits.reshape({-1, logits.size(-1)}), -1);
  const auto picked = log_probabilities.gather(1, targets.reshape({-1, 1}));
  return -picked.to(torch::kFloat).mean();
}

}  // namespace dvfslab::torch_backend
