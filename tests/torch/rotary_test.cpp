// The rotary embedding: on every build, against the rotation written out pair by
// pair on a strided view like the projection's; on a CUDA GPU with the own kernels
// built, the kernel's output and gradient against the same formula in FP32.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "own_kernel_test.hpp"
#include "workload/torch/rotary.hpp"

namespace dvfslab::torch_backend {
namespace {

constexpr int head_dim = 16;

struct Tables {
  torch::Tensor cos, signed_sin;
};

// Angles that differ per token and feature, the two halves of a head sharing theirs.
Tables tables(std::int64_t tokens, const torch::Device& device) {
  const auto angles = torch::rand({tokens, head_dim / 2}) * 6.0 - 3.0;
  return {torch::cat({angles.cos(), angles.cos()}, -1).to(device),
          torch::cat({-angles.sin(), angles.sin()}, -1).to(device)};
}

// [batch, tokens, heads, head_dim] as a view into a wider projection output, the
// layout the decoder passes.
torch::Tensor strided_heads(std::int64_t batch, std::int64_t tokens, std::int64_t heads,
                            torch::TensorOptions options) {
  const auto projection = torch::randn({batch, tokens, 3 * heads * head_dim}, options);
  return projection.narrow(-1, heads * head_dim, heads * head_dim).view({batch, tokens, heads, head_dim});
}

// Each pair (d, d + h) turned by its token's angle, one pair at a time.
torch::Tensor rotated_pairwise(const torch::Tensor& x, const Tables& t) {
  const auto cos = t.cos.unsqueeze(1), sin = t.signed_sin.unsqueeze(1);
  const auto h = head_dim / 2;
  const auto x1 = x.narrow(-1, 0, h), x2 = x.narrow(-1, h, h);
  return torch::cat({x1 * cos.narrow(-1, 0, h) + x2 * sin.narrow(-1, 0, h),
                     x2 * cos.narrow(-1, h, h) + x1 * sin.narrow(-1, h, h)},
                    -1);
}

TEST(RotaryEmbedding, RotatesEachPairByItsTokensAngleOffTheGpu) {
  torch::manual_seed(5);
  const auto x = strided_heads(2, 5, 3, torch::kFloat);
  const auto t = tables(5, torch::kCPU);
  EXPECT_FALSE(own_rotary_applies(x, t.cos, t.signed_sin)) << "the kernel runs on CUDA only";
  const auto rotated = rotary_embedding(x, t.cos, t.signed_sin);
  EXPECT_EQ(rotated.sizes(), x.sizes());
  EXPECT_TRUE(torch::allclose(rotated, rotated_pairwise(x, t), 1e-6, 1e-6));
  // A rotation keeps each pair's length.
  EXPECT_TRUE(torch::allclose(rotated.square().sum(-1), x.square().sum(-1), 1e-5, 1e-5));
}

class OwnRotaryOnCuda : public OwnKernelOnCuda {};

TEST_P(OwnRotaryOnCuda, OutputAndGradientAreTheFormulasInFp32) {
  const auto type = GetParam();
  torch::manual_seed(7);
  const auto options = torch::TensorOptions().device(torch::kCUDA).dtype(type);
  const auto x = strided_heads(3, 9, 4, options).requires_grad_(true);
  const auto t = tables(9, torch::kCUDA);
  ASSERT_TRUE(own_rotary_applies(x, t.cos, t.signed_sin));
  const auto rotated = rotary_embedding(x, t.cos, t.signed_sin);
  ASSERT_EQ(rotated.scalar_type(), type);
  const auto reference_input = x.detach().to(torch::kFloat).requires_grad_(true);
  const auto expected = rotated_pairwise(reference_input, t);
  const double tol = kernel_tolerance(type);
  EXPECT_TRUE(torch::allclose(rotated.to(torch::kFloat), expected, tol, tol))
      << "largest difference " << (rotated.to(torch::kFloat) - expected).abs().max().item<double>();

  // A gradient in the layout attention's backward gives it: transposed heads.
  const auto upstream = torch::randn({3, 4, 9, head_dim}, options).transpose(1, 2);
  rotated.backward(upstream);
  expected.backward(upstream.to(torch::kFloat));
  EXPECT_TRUE(torch::allclose(x.grad().to(torch::kFloat), reference_input.grad(), tol, tol))
      << "largest difference "
      << (x.grad().to(torch::kFloat) - reference_input.grad()).abs().max().item<double>();
}

TEST_P(OwnRotaryOnCuda, HeadsTooNarrowForAPackGoToAten) {
  const auto type = GetParam();
  const auto options = torch::TensorOptions().device(torch::kCUDA).dtype(type);
  const auto narrow_heads = torch::randn({1, 2, 2, 6}, options);
  const auto six_wide = torch::ones({2, 6}, options.dtype(torch::kFloat));
  EXPECT_FALSE(own_rotary_applies(narrow_heads, six_wide, six_wide));
  EXPECT_EQ(rotary_embedding(narrow_heads, six_wide, six_wide).sizes(), narrow_heads.sizes());
}

INSTANTIATE_TEST_SUITE_P(Types, OwnRotaryOnCuda,
                         ::testing::Values(torch::kFloat, torch::kHalf, torch::kBFloat16));

}  // namespace
}  // namespace dvfslab::torch_backend
