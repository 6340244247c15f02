// The tied language-model head gives the plain product's logits and gradients,
// whether or not it pads the vocabulary for aligned GEMMs.
#include <gtest/gtest.h>
#include <torch/torch.h>

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
HeadResult run_head(const torch::Tensor& hidden, const torch::Tensor& embeddings, const torch::Tensor& weights,
                    Head head) {
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

}  // namespace
}  // namespace dvfslab::torch_backend
