// A linear layer with the bias in its own type: off the GPU it is ATen's linear
// with the bias cast to the input's type; on a CUDA GPU with the own kernels, the
// products are ATen's and the bias's gradient is the FP32 sum of the output's
// gradient, in the bias's type.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <utility>

#include "own_kernel_test.hpp"
#include "workload/torch/biased_linear.hpp"

namespace dvfslab::torch_backend {
namespace {

TEST(BiasedLinear, OnTheCpuIsAtensLinearWithTheBiasCastAndItsGradientInItsOwnType) {
  torch::manual_seed(7);
  const auto input = torch::randn({3, 5, 8}).to(torch::kBFloat16).requires_grad_(true);
  const auto weight = torch::randn({12, 8}).to(torch::kBFloat16).requires_grad_(true);
  const auto bias = torch::randn({12}).requires_grad_(true);
  EXPECT_FALSE(own_bias_gradient_applies(input, weight, bias)) << "the kernel runs on CUDA only";
  const auto output = biased_linear(input, weight, bias);
  ASSERT_EQ(output.scalar_type(), torch::kBFloat16);
  const auto twin = bias.detach().clone().requires_grad_(true);
  const auto reference = torch::linear(input.detach(), weight.detach(), twin.to(torch::kBFloat16));
  EXPECT_TRUE(torch::equal(output, reference));
  const auto upstream = torch::randn({3, 5, 12}).to(torch::kBFloat16);
  output.backward(upstream);
  reference.backward(upstream);
  ASSERT_EQ(bias.grad().scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::equal(bias.grad(), twin.grad()));
  EXPECT_EQ(input.grad().sizes(), input.sizes());
  EXPECT_EQ(weight.grad().sizes(), weight.sizes());
}

TEST(BiasedLinear, WithoutABiasIsThePlainProduct) {
  torch::manual_seed(8);
  const auto input = torch::randn({4, 6});
  const auto weight = torch::randn({3, 6});
  EXPECT_FALSE(own_bias_gradient_applies(input, weight, torch::Tensor()));
  EXPECT_TRUE(torch::equal(biased_linear(input, weight, torch::Tensor()), torch::linear(input, weight)));
}

class OwnBiasGradientOnCuda : public OwnKernelOnCuda {};

// 16-bit products with an FP32 or a same-type bias; widths with and without a
// partial column tile, and one past the 65,535 tiles of 128 columns a grid's y
// dimension holds (so blocks loop over tiles); many rows and one.
TEST_P(OwnBiasGradientOnCuda, ProductsAreAtensAndTheBiasGradientIsTheSumOfTheOutputs) {
  const auto bias_type = GetParam();
  const auto options = torch::TensorOptions().device(torch::kCUDA);
  for (const auto type : {torch::kHalf, torch::kBFloat16}) {
    for (const auto& [rows, width] :
         {std::pair<std::int64_t, std::int64_t>{1, 4}, {2 * 129, 132}, {4096, 768}, {2, 65535 * 128 + 4}}) {
      SCOPED_TRACE(std::string(c10::toString(type)) + " with a " + c10::toString(bias_type) + " bias, " +
                   std::to_string(rows) + " rows x " + std::to_string(width));
      torch::manual_seed(rows + width);
      const auto input =
          torch::randn({rows / 2 + rows % 2, 2 - rows % 2, 64}, options).to(type).requires_grad_(true);
      const auto weight = (torch::randn({width, 64}, options) * 0.1).to(type).requires_grad_(true);
      const auto bias = torch::randn({width}, options).to(bias_type).requires_grad_(true);
      ASSERT_TRUE(own_bias_gradient_applies(input, weight, bias));
      const auto output = biased_linear(input, weight, bias);
      ASSERT_EQ(output.scalar_type(), type);

      const auto leaf = [](const torch::Tensor& t) { return t.detach().clone().requires_grad_(true); };
      const auto input_twin = leaf(input), weight_twin = leaf(weight), bias_twin = leaf(bias);
      const auto reference = torch::linear(input_twin, weight_twin, bias_twin.to(type));
      EXPECT_TRUE(torch::equal(output, reference));

      const auto upstream = torch::randn(output.sizes(), options).to(type);
      output.backward(upstream);
      reference.backward(upstream);
      const double tolerance = kernel_tolerance(type);
      EXPECT_TRUE(torch::allclose(input.grad(), input_twin.grad(), tolerance, tolerance));
      EXPECT_TRUE(torch::allclose(weight.grad(), weight_twin.grad(), tolerance, tolerance));
      ASSERT_EQ(bias.grad().scalar_type(), bias_type);
      const auto exact_sum = upstream.to(torch::kDouble).reshape({-1, width}).sum(0);
      const double sum_tolerance = std::max(kernel_tolerance(bias_type), 1e-4);
      EXPECT_TRUE(torch::allclose(bias.grad().to(torch::kDouble), exact_sum, sum_tolerance, sum_tolerance))
          << "largest difference " << (bias.grad().to(torch::kDouble) - exact_sum).abs().max().item<double>();
    }
  }
}

TEST(OwnBiasGradientOnCudaScope, AppliesOnlyWhereAGradientIsRecorded) {
  if (!cuda_usable() || !own_kernels_built()) GTEST_SKIP() << "needs a CUDA GPU and the own kernels built";
  const auto options = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kBFloat16);
  const auto input = torch::randn({8, 16}, options);
  const auto weight = torch::randn({4, 16}, options).requires_grad_(true);
  const auto bias = torch::randn({4}, options.dtype(torch::kFloat)).requires_grad_(true);
  EXPECT_TRUE(own_bias_gradient_applies(input, weight, bias));
  {
    const torch::NoGradGuard inference;
    EXPECT_FALSE(own_bias_gradient_applies(input, weight, bias));
  }
  EXPECT_FALSE(own_bias_gradient_applies(input.to(torch::kFloat), weight.to(torch::kFloat), bias))
      << "FP32 products keep ATen's sum";
  EXPECT_FALSE(own_bias_gradient_applies(input, torch::randn({6, 16}, options), torch::randn({6}, options)))
      << "an output width that is not a multiple of 4";
}

INSTANTIATE_TEST_SUITE_P(Types, OwnBiasGradientOnCuda, ::testing::Values(torch::kFloat, torch::kBFloat16));

}  // namespace
}  // namespace dvfslab::torch_backend
