// The tied language-model head gives the plain product's logits and gradients,
// whether or not it pads the vocabulary for aligned GEMMs.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <optional>

#include "workload/torch/tied_head.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

struct HeadResult {
  torch::Tensor logits;
  torch::Tensor embedding_gradient;
};

// Logits of `hidden` against `embeddings` and the gradient a weighted sum of them
// sends back to the embeddings, through `head`.
template <typename Head>
HeadResult run_head(const torch::Tensor& hidden, const torch::Tensor& embeddings,
                    const torch::Tensor& weights, Head head) {
  auto leaf = embeddings.detach().clone().requires_grad_(true);
  auto logits = head(hidden, leaf);
  (logits.to(torch::kFloat) * weights).sum().backward();
  return {logits.detach().to(torch::kFloat), leaf.grad()};
}

HeadResult plain(const torch::Tensor& hidden, const torch::Tensor& embeddings, const torch::Tensor& weights) {
  return run_head(hidden, embeddings, weights,
                  [](const torch::Tensor& h, const torch::Tensor& e) { return torch::linear(h, e); });
}

HeadResult tied(const torch::Tensor& hidden, const torch::Tensor& embeddings, const torch::Tensor& weights) {
  return run_head(hidden, embeddings, weights, tied_head_logits);
}

double relative_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max()).item<double>();
}

TEST(TiedHead, LogitsHaveOneColumnPerWordOfTheVocabulary) {
  torch::manual_seed(0);
  for (const int vocabulary : {100, 128, 257}) {
    const auto hidden = torch::randn({2, 3, 16});
    const auto embeddings = torch::randn({vocabulary, 16});
    const auto weights = torch::randn({2, 3, vocabulary});
    const auto got = tied(hidden, embeddings, weights);
    const auto want = plain(hidden, embeddings, weights);
    ASSERT_EQ(got.logits.sizes(), (std::vector<std::int64_t>{2, 3, vocabulary}));
    EXPECT_LT(relative_difference(got.logits, want.logits), 1e-6) << vocabulary;
    EXPECT_LT(relative_difference(got.embedding_gradient, want.embedding_gradient), 1e-6) << vocabulary;
  }
}

TEST(TiedHead, PaddedProductOnCudaAgreesWithThePlainOneUnderBf16Autocast) {
  if (!cuda_usable()) GTEST_SKIP() << "needs a CUDA GPU and a LibTorch with CUDA";
  torch::manual_seed(0);
  const auto cuda = torch::TensorOptions().device(torch::kCUDA);
  for (const int vocabulary : {1000, 1024, 50257}) {
    const auto hidden = torch::randn({4, 32, 64}, cuda);
    const auto embeddings = torch::randn({vocabulary, 64}, cuda) * 0.02;
    const auto weights = torch::randn({4, 32, vocabulary}, cuda);
    HeadResult got, want;
    {
      AutocastScope autocast(torch::kCUDA, torch::kBFloat16);
      got = tied(hidden, embeddings, weights);
      want = plain(hidden, embeddings, weights);
    }
    ASSERT_EQ(got.logits.sizes(), (std::vector<std::int64_t>{4, 32, vocabulary}));
    EXPECT_EQ(got.embedding_gradient.scalar_type(), torch::kFloat);
    EXPECT_LT(relative_difference(got.logits, want.logits), 1e-2) << vocabulary;
    EXPECT_LT(relative_difference(got.embedding_gradient, want.embedding_gradient), 1e-2) << vocabulary;
  }
}

struct LossResult {
  double loss;
  torch::Tensor hidden_gradient;
  torch::Tensor embedding_gradient;
};

LossResult run_loss(const torch::Tensor& hidden, const torch::Tensor& embeddings,
                    const torch::Tensor& targets, bool through_tied_head) {
  auto hidden_leaf = hidden.detach().clone().requires_grad_(true);
  auto embedding_leaf = embeddings.detach().clone().requires_grad_(true);
  const auto loss = through_tied_head
                        ? tied_head_cross_entropy(hidden_leaf, embedding_leaf, targets)
                        : torch::nn::functional::cross_entropy(
                              torch::linear(hidden_leaf, embedding_leaf).flatten(0, -2), targets.flatten());
  loss.backward();
  return {loss.item<double>(), hidden_leaf.grad(), embedding_leaf.grad()};
}

// The loss and both gradients through the tied head against the plain product's,
// for vocabularies that are padded (1000, 50257) and one that is not (1024).
void expect_loss_matches_plain(const torch::TensorOptions& options, bool autocast, double tolerance) {
  torch::manual_seed(0);
  for (const int vocabulary : {1000, 1024, 50257}) {
    const auto hidden = torch::randn({4, 32, 64}, options);
    const auto embeddings = torch::randn({vocabulary, 64}, options) * 0.1;
    const auto targets = torch::randint(vocabulary, {4, 32}, options.dtype(torch::kLong));
    LossResult got, want;
    {
      std::optional<AutocastScope> scope;
      if (autocast) scope.emplace(options.device().type(), torch::kBFloat16);
      got = run_loss(hidden, embeddings, targets, true);
      want = run_loss(hidden, embeddings, targets, false);
    }
    EXPECT_TRUE(std::isfinite(got.loss)) << vocabulary;
    EXPECT_NEAR(got.loss, want.loss, tolerance * want.loss) << vocabulary;
    EXPECT_LT(relative_difference(got.hidden_gradient, want.hidden_gradient), tolerance) << vocabulary;
    EXPECT_LT(relative_difference(got.embedding_gradient, want.embedding_gradient), tolerance) << vocabulary;
    EXPECT_FALSE(got.embedding_gradient.isnan().any().item<bool>()) << vocabulary;
  }
}

TEST(TiedHead, CrossEntropyOverThePaddedProductIsThePlainOnesOnTheCpu) {
  expect_loss_matches_plain(torch::TensorOptions(), false, 1e-5);
}

TEST(TiedHead, CrossEntropyOverThePaddedProductIsThePlainOnesOnCuda) {
  if (!cuda_usable()) GTEST_SKIP() << "needs a CUDA GPU and a LibTorch with CUDA";
  const auto cuda = torch::TensorOptions().device(torch::kCUDA);
  expect_loss_matches_plain(cuda, false, 1e-3);
  expect_loss_matches_plain(cuda, true, 2e-2);
}

}  // namespace
}  // namespace dvfslab::torch_backend
