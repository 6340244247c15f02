// The language models' loss against LibTorch's cross_entropy: the same value and
// gradient, in FP32 and under bf16 autocast.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "workload/torch/token_loss.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

struct LossAndGradient {
  double loss;
  torch::Tensor gradient;
};

template <typename Loss>
LossAndGradient evaluate(const torch::Tensor& logits, const torch::Tensor& targets, Loss loss_of) {
  const auto leaf = logits.detach().clone().requires_grad_(true);
  const auto loss = loss_of(leaf, targets);
  loss.backward();
  return {loss.template item<double>(), leaf.grad()};
}

LossAndGradient reference(const torch::Tensor& logits, const torch::Tensor& targets) {
  return evaluate(logits, targets, [](const torch::Tensor& l, const torch::Tensor& t) {
    return torch::nn::functional::cross_entropy(l.reshape({-1, l.size(-1)}), t.reshape({-1}));
  });
}

LossAndGradient ours(const torch::Tensor& logits, const torch::Tensor& targets) {
  return evaluate(logits, targets, mean_token_cross_entropy);
}

TEST(TokenLoss, IsCrossEntropyInFp32) {
  torch::manual_seed(5);
  for (const int vocabulary : {7, 1000, 50257}) {
    const auto logits = torch::randn({2, 3, vocabulary}) * 4;
    const auto targets = torch::randint(vocabulary, {2, 3}, torch::kLong);
    const auto got = ours(logits, targets), want = reference(logits, targets);
    EXPECT_NEAR(got.loss, want.loss, 1e-6 * want.loss) << vocabulary;
    EXPECT_TRUE(torch::allclose(got.gradient, want.gradient, 1e-5, 1e-8)) << vocabulary;
  }
}

TEST(TokenLoss, IsCrossEntropyUnderBf16Autocast) {
  const auto device = cuda_usable() ? torch::kCUDA : torch::kCPU;
  torch::manual_seed(6);
  const auto logits =
      (torch::randn({4, 64, 50304}, torch::TensorOptions().device(device)) * 4).to(torch::kBFloat16);
  const auto targets =
      torch::randint(50257, {4, 64}, torch::TensorOptions().dtype(torch::kLong).device(device));
  LossAndGradient got, want;
  {
    AutocastScope autocast(device, torch::kBFloat16);
    got = ours(logits, targets);
    want = reference(logits, targets);
  }
  ASSERT_EQ(got.gradient.scalar_type(), torch::kBFloat16);
  EXPECT_NEAR(got.loss, want.loss, 1e-3 * want.loss);
  // Within bf16's rounding of the largest gradient (the targets' entries, about -1/rows).
  const auto want_gradient = want.gradient.to(torch::kFloat);
  const double rounding = 1e-2 * want_gradient.abs().max().item<double>();
  EXPECT_TRUE(torch::allclose(got.gradient.to(torch::kFloat), want_gradient, 0.0, rounding))
      << "largest difference " << (got.gradient - want.gradient).abs().max().item<double>();
}

}  // namespace
}  // namespace dvfslab::torch_backend
