// Operands cast for autocast: off the GPU the cast is ATen's, under autocast only;
// on a CUDA GPU with the own kernels built, the kernel's values and gradients are
// ATen's to the bit.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "own_kernel_test.hpp"
#include "workload/torch/autocast_operand.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

TEST(AutocastOperand, IsTheTensorItselfWithoutAutocast) {
  const auto weight = torch::randn({4, 8});
  EXPECT_TRUE(autocast_operand(weight).is_same(weight));
  EXPECT_FALSE(autocast_operand(torch::Tensor()).defined());
}

TEST(AutocastOperand, UnderCpuAutocastIsTheBf16CastWithAnFp32Gradient) {
  torch::manual_seed(1);
  const auto weight = torch::randn({5, 7}).requires_grad_(true);
  const auto already = torch::randn({3}).to(torch::kBFloat16);
  torch::Tensor operand;
  {
    AutocastScope autocast(torch::kCPU, torch::kBFloat16);
    operand = autocast_operand(weight);
    EXPECT_TRUE(autocast_operand(already).is_same(already)) << "a tensor already in autocast's type";
    EXPECT_FALSE(autocast_operand(torch::Tensor()).defined());
  }
  ASSERT_EQ(operand.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(operand, weight.detach().to(torch::kBFloat16)));
  EXPECT_FALSE(own_cast_applies(weight)) << "the kernel runs on CUDA only";
  const auto upstream = torch::randn({5, 7}).to(torch::kBFloat16);
  operand.backward(upstream);
  ASSERT_EQ(weight.grad().scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::equal(weight.grad(), upstream.to(torch::kFloat)));
}

class OwnCastOnCuda : public OwnKernelOnCuda {};

// Every pair of types, on lengths with and without a partial last pack; a tensor
// off the 16-byte boundary goes to ATen.
TEST_P(OwnCastOnCuda, ValuesAndGradientsAreAtensToTheBit) {
  const auto from = GetParam();
  for (const auto to : {torch::kFloat, torch::kHalf, torch::kBFloat16}) {
    if (to == from) continue;
    for (const std::int64_t length : {1, 7, 8, 4099, (1 << 20) + 3}) {
      SCOPED_TRACE(std::string(c10::toString(from)) + " to " + c10::toString(to) + ", " +
                   std::to_string(length));
      torch::manual_seed(length);
      const auto base =
          (torch::randn({length + 1}, torch::TensorOptions().device(torch::kCUDA)) * 300).to(from);
      const auto leaf = base.narrow(0, 0, length).clone().requires_grad_(true);
      ASSERT_TRUE(own_cast_applies(leaf));
      const auto cast = cast_to(leaf, to);
      ASSERT_EQ(cast.scalar_type(), to);
      EXPECT_TRUE(torch::equal(cast, leaf.detach().to(to)));
      const auto upstream = (torch::randn({length}, cast.options().dtype(torch::kFloat)) * 300).to(to);
      cast.backward(upstream);
      ASSERT_EQ(leaf.grad().scalar_type(), from);
      EXPECT_TRUE(torch::equal(leaf.grad(), upstream.to(from)));

      const auto off_boundary = base.narrow(0, 1, length);
      EXPECT_FALSE(own_cast_applies(off_boundary));
      EXPECT_TRUE(torch::equal(cast_to(off_boundary, to), off_boundary.to(to)));
    }
  }
}

TEST(OwnCastUnderAutocast, OperandsOfAMatrixProductGiveAutocastsValuesAndGradients) {
  if (!cuda_usable() || !own_kernels_built()) GTEST_SKIP() << "needs a CUDA GPU and the own kernels built";
  torch::manual_seed(4);
  const auto options = torch::TensorOptions().device(torch::kCUDA);
  const auto input = torch::randn({16, 64}, options);
  const auto weight = (torch::randn({48, 64}, options) * 0.1).requires_grad_(true);
  const auto twin = weight.detach().clone().requires_grad_(true);
  torch::Tensor ours, autocasts;
  {
    AutocastScope autocast(torch::kCUDA, torch::kBFloat16);
    ASSERT_TRUE(own_cast_applies(weight));
    ours = torch::linear(autocast_operand(input), autocast_operand(weight));
    autocasts = torch::linear(input, twin);
  }
  ASSERT_EQ(ours.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(ours, autocasts));
  ours.to(torch::kFloat).sum().backward();
  autocasts.to(torch::kFloat).sum().backward();
  EXPECT_TRUE(torch::equal(weight.grad(), twin.grad()));
}

INSTANTIATE_TEST_SUITE_P(Types, OwnCastOnCuda,
                         ::testing::Values(torch::kFloat, torch::kHalf, torch::kBFloat16));

}  // namespace
}  // namespace dvfslab::torch_backend
