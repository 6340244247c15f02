// The layer norm as a product's operand, alone and after a residual add: without
// autocast exactly the module's forward; under autocast the norm in autocast's
// type with gradients in the parameters' type. On a CUDA GPU with the own kernels built, every pair of input
// and output types gives the layer norm computed in FP32, values and gradients,
// within a few units in the last place of the type.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "own_kernel_test.hpp"
#include "workload/torch/layer_norm_operand.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

constexpr double epsilon = 1e-5;

torch::nn::LayerNorm norm_with_random_parameters(std::int64_t width) {
  torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({width}).eps(epsilon));
  const torch::NoGradGuard no_grad;
  norm->weight.normal_(1.0, 0.5);
  norm->bias.normal_(0.0, 0.2);
  return norm;
}

TEST(LayerNormOperand, IsTheModulesForwardWithoutAutocast) {
  torch::manual_seed(2);
  auto norm = norm_with_random_parameters(8);
  const auto input = torch::randn({3, 5, 8});
  const auto operand = layer_norm_operand(norm, input);
  EXPECT_EQ(operand.scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::equal(operand, norm->forward(input)));
}

TEST(LayerNormOperand, UnderCpuAutocastIsTheNormInBf16WithFp32Gradients) {
  torch::manual_seed(3);
  auto norm = norm_with_random_parameters(16);
  auto twin = norm_with_random_parameters(16);
  {
    const torch::NoGradGuard no_grad;
    twin->weight.copy_(norm->weight);
    twin->bias.copy_(norm->bias);
  }
  const auto input = (torch::randn({4, 6, 16}) * 3 + 1).requires_grad_(true);
  const auto input_twin = input.detach().clone().requires_grad_(true);
  torch::Tensor operand;
  {
    AutocastScope autocast(torch::kCPU, torch::kBFloat16);
    operand = layer_norm_operand(norm, input);
  }
  EXPECT_FALSE(own_layer_norm_applies(input, norm->weight, norm->bias)) << "the kernels run on CUDA only";
  ASSERT_EQ(operand.scalar_type(), torch::kBFloat16);
  const auto reference = twin->forward(input_twin);
  EXPECT_TRUE(torch::equal(operand, reference.detach().to(torch::kBFloat16)));

  const auto upstream = torch::randn({4, 6, 16}).to(torch::kBFloat16);
  operand.backward(upstream);
  reference.backward(upstream.to(torch::kFloat));
  for (const auto& [ours, theirs] :
       {std::pair{input.grad(), input_twin.grad()}, std::pair{norm->weight.grad(), twin->weight.grad()},
        std::pair{norm->bias.grad(), twin->bias.grad()}}) {
    ASSERT_EQ(ours.scalar_type(), torch::kFloat);
    EXPECT_TRUE(torch::equal(ours, theirs));
  }
}

TEST(ResidualLayerNormOperand, OffTheGpuIsTheAddThenTheNormsOperand) {
  torch::manual_seed(4);
  auto norm = norm_with_random_parameters(16);
  const auto stream = torch::randn({2, 3, 16}).requires_grad_(true);
  const auto branch = torch::randn({2, 3, 16}).to(torch::kBFloat16).requires_grad_(true);
  std::pair<torch::Tensor, torch::Tensor> outputs;
  torch::Tensor expected_operand;
  {
    AutocastScope autocast(torch::kCPU, torch::kBFloat16);
    outputs = residual_layer_norm_operand(stream, branch, norm);
    expected_operand = layer_norm_operand(norm, stream.detach() + branch.detach());
  }
  EXPECT_TRUE(torch::equal(outputs.first, stream.detach() + branch.detach()));
  ASSERT_EQ(outputs.second.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(outputs.second, expected_operand));
  outputs.second.to(torch::kFloat).sum().backward();
  EXPECT_EQ(stream.grad().scalar_type(), torch::kFloat);
  EXPECT_EQ(branch.grad().scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(branch.grad(), stream.grad().to(torch::kBFloat16)));
}

// Sums over a row or a column in another order than ATen's: FP32 results carry a
// little more than one rounding.
double gradient_tolerance(torch::ScalarType type) { return std::max(kernel_tolerance(type), 1e-4); }

void expect_close(const torch::Tensor& ours, const torch::Tensor& reference, double tolerance,
                  const std::string& what) {
  const auto difference = (ours.to(torch::kFloat) - reference.to(torch::kFloat)).abs().max().item<double>();
  EXPECT_TRUE(torch::allclose(ours.to(torch::kFloat), reference.to(torch::kFloat), tolerance, tolerance))
      << what << ": largest difference " << difference;
}

class OwnLayerNormOnCuda : public OwnKernelOnCuda {};

// Widths below one warp's 128 columns, with a partial column tile (132) and a
// partial last pass (1028); one row and many.
TEST_P(OwnLayerNormOnCuda, ValuesAndGradientsAreTheNormInFp32) {
  const auto input_type = GetParam();
  const auto options = torch::TensorOptions().device(torch::kCUDA);
  for (const auto output_type : {torch::kFloat, torch::kHalf, torch::kBFloat16}) {
    for (const auto& [rows, width] :
         {std::pair<std::int64_t, std::int64_t>{1, 4}, {3, 768}, {1000, 132}, {37, 1028}}) {
      SCOPED_TRACE(std::string(c10::toString(input_type)) + " to " + c10::toString(output_type) + ", " +
                   std::to_string(rows) + " x " + std::to_string(width));
      torch::manual_seed(rows + width);
      const auto input = (torch::randn({rows, width}, options) * 3 + 1).to(input_type).requires_grad_(true);
      const auto gain = (torch::randn({width}, options) * 0.5 + 1).to(input_type).requires_grad_(true);
      const auto bias = (torch::randn({width}, options) * 0.2).to(input_type).requires_grad_(true);
      ASSERT_TRUE(own_layer_norm_applies(input, gain, bias));
      const auto output = layer_norm_to(input, gain, bias, epsilon, output_type);
      ASSERT_EQ(output.scalar_type(), output_type);

      const auto wide = [](const torch::Tensor& t) {
        return t.detach().to(torch::kFloat).requires_grad_(true);
      };
      const auto input32 = wide(input), gain32 = wide(gain), bias32 = wide(bias);
      const auto reference = torch::layer_norm(input32, {width}, gain32, bias32, epsilon);
      expect_close(output, reference.detach().to(output_type), kernel_tolerance(output_type), "output");

      const auto upstream = torch::randn({rows, width}, options).to(output_type);
      output.backward(upstream);
      reference.backward(upstream.to(torch::kFloat));
      const double tolerance = gradient_tolerance(input_type);
      for (const auto& [leaf, leaf32, what] :
           {std::tuple{input, input32, "input's gradient"}, std::tuple{gain, gain32, "gain's gradient"},
            std::tuple{bias, bias32, "bias's gradient"}}) {
        ASSERT_EQ(leaf.grad().scalar_type(), input_type) << what;
        expect_close(leaf.grad(), leaf32.grad().to(input_type), tolerance, what);
      }
    }
  }
}

TEST(OwnLayerNormUnderAutocast, GivesAutocastsOperandAndFp32Gradients) {
  if (!cuda_usable() || !own_kernels_built()) GTEST_SKIP() << "needs a CUDA GPU and the own kernels built";
  torch::manual_seed(5);
  auto norm = norm_with_random_parameters(768);
  norm->to(torch::kCUDA);
  const auto input =
      (torch::randn({2, 64, 768}, torch::TensorOptions().device(torch::kCUDA)) * 2).requires_grad_(true);
  torch::Tensor operand, reference;
  {
    AutocastScope autocast(torch::kCUDA, torch::kBFloat16);
    ASSERT_TRUE(own_layer_norm_applies(input, norm->weight, norm->bias));
    operand = layer_norm_operand(norm, input);
    reference = norm->forward(input);
  }
  ASSERT_EQ(operand.scalar_type(), torch::kBFloat16);
  ASSERT_EQ(reference.scalar_type(), torch::kFloat) << "autocast runs ATen's layer norm in FP32";
  expect_close(operand, reference.detach().to(torch::kBFloat16), kernel_tolerance(torch::kBFloat16),
               "operand");
  operand.to(torch::kFloat).square().sum().backward();
  EXPECT_EQ(input.grad().scalar_type(), torch::kFloat);
  EXPECT_EQ(norm->weight.grad().scalar_type(), torch::kFloat);
  EXPECT_EQ(norm->bias.grad().scalar_type(), torch::kFloat);
}

// GPT-2's every norm but the first: the FP32 stream plus a bf16 branch, normalised
// into a bf16 operand. Backward the stream's gradient is the norm's plus the sum's
// own, and the branch's the same in bf16; the final norm's sum gets no gradient.
TEST(OwnResidualLayerNormUnderAutocast, IsTheAddAndTheNormInFp32) {
  if (!cuda_usable() || !own_kernels_built()) GTEST_SKIP() << "needs a CUDA GPU and the own kernels built";
  const auto options = torch::TensorOptions().device(torch::kCUDA);
  for (const bool sum_has_gradient : {true, false}) {
    SCOPED_TRACE(sum_has_gradient ? "the sum has a gradient" : "only the operand has a gradient");
    torch::manual_seed(sum_has_gradient ? 9 : 10);
    auto norm = norm_with_random_parameters(768);
    norm->to(torch::kCUDA);
    const auto stream = (torch::randn({4, 33, 768}, options) * 2).requires_grad_(true);
    const auto branch = torch::randn({4, 33, 768}, options).to(torch::kBFloat16).requires_grad_(true);
    std::pair<torch::Tensor, torch::Tensor> outputs;
    {
      AutocastScope autocast(torch::kCUDA, torch::kBFloat16);
      outputs = residual_layer_norm_operand(stream, branch, norm);
    }
    const auto& [sum, operand] = outputs;
    ASSERT_EQ(sum.scalar_type(), torch::kFloat);
    ASSERT_EQ(operand.scalar_type(), torch::kBFloat16);

    const auto leaf = [](const torch::Tensor& t) { return t.detach().to(torch::kFloat).requires_grad_(true); };
    const auto stream32 = leaf(stream), branch32 = leaf(branch), gain32 = leaf(norm->weight),
               bias32 = leaf(norm->bias);
    const auto sum32 = stream32 + branch32;
    const auto operand32 = torch::layer_norm(sum32, {768}, gain32, bias32, epsilon);
    EXPECT_TRUE(torch::equal(sum, sum32.detach()));
    expect_close(operand, operand32.detach().to(torch::kBFloat16), kernel_tolerance(torch::kBFloat16), "operand");

    const auto upstream = torch::randn(operand.sizes(), options).to(torch::kBFloat16);
    if (sum_has_gradient) {
      const auto sum_upstream = torch::randn(sum.sizes(), options);
      torch::autograd::backward({sum, operand}, {sum_upstream, upstream});
      torch::autograd::backward({sum32, operand32}, {sum_upstream, upstream.to(torch::kFloat)});
    } else {
      operand.backward(upstream);
      operand32.backward(upstream.to(torch::kFloat));
    }
    expect_close(stream.grad(), stream32.grad(), gradient_tolerance(torch::kFloat), "stream's gradient");
    ASSERT_EQ(branch.grad().scalar_type(), torch::kBFloat16);
    expect_close(branch.grad(), branch32.grad().to(torch::kBFloat16), kernel_tolerance(torch::kBFloat16),
                 "branch's gradient");
    expect_close(norm->weight.grad(), gain32.grad(), gradient_tolerance(torch::kFloat), "gain's gradient");
    expect_close(norm->bias.grad(), bias32.grad(), gradient_tolerance(torch::kFloat), "bias's gradient");
  }
}

TEST(OwnLayerNormOnCudaFallback, TakesAtensPathWhereTheKernelsDoNot) {
  if (!cuda_usable()) GTEST_SKIP() << "needs a CUDA GPU and a LibTorch with CUDA";
  const auto options = torch::TensorOptions().device(torch::kCUDA);
  torch::manual_seed(6);
  const auto gain = torch::randn({6}, options), bias = torch::randn({6}, options);
  const auto odd_width = torch::randn({5, 6}, options);
  EXPECT_FALSE(own_layer_norm_applies(odd_width, gain, bias)) << "width not a multiple of 4";
  expect_close(layer_norm_to(odd_width, gain, bias, epsilon, torch::kBFloat16),
               torch::layer_norm(odd_width, {6}, gain, bias, epsilon).to(torch::kBFloat16),
               kernel_tolerance(torch::kBFloat16), "odd width");
  const auto base = torch::randn({4 * 8 + 1}, options);
  const auto off_boundary = base.narrow(0, 1, 4 * 8).view({4, 8});
  const auto gain8 = torch::randn({8}, options), bias8 = torch::randn({8}, options);
  EXPECT_FALSE(own_layer_norm_applies(off_boundary, gain8, bias8)) << "input off the 16-byte boundary";
  EXPECT_FALSE(own_layer_norm_applies(torch::randn({4, 8}, options), gain8.to(torch::kHalf), bias8))
      << "a gain of another type";
}

INSTANTIATE_TEST_SUITE_P(Types, OwnLayerNormOnCuda,
                         ::testing::Values(torch::kFloat, torch::kHalf, torch::kBFloat16));

}  // namespace
}  // namespace dvfslab::torch_backend
