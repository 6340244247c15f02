// SwiGLU: on every build, against silu(gate) · up written out; on a CUDA GPU with
// the own kernels built, the kernels' output and the gradients of both halves
// against the same formula in FP32.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "own_kernel_test.hpp"
#include "workload/torch/swiglu.hpp"

namespace dvfslab::torch_backend {
namespace {

torch::Tensor swiglu_written_out(const torch::Tensor& gate_and_up) {
  const auto width = gate_and_up.size(-1) / 2;
  const auto gate = gate_and_up.narrow(-1, 0, width), up = gate_and_up.narrow(-1, width, width);
  return gate / (1 + torch::exp(-gate)) * up;
}

TEST(Swiglu, IsSiluOfTheGateTimesUpOffTheGpu) {
  torch::manual_seed(3);
  const auto gate_and_up = torch::randn({2, 5, 2 * 24}) * 3;
  EXPECT_FALSE(own_swiglu_applies(gate_and_up)) << "the kernels run on CUDA only";
  const auto gated = swiglu(gate_and_up);
  EXPECT_EQ(gated.sizes(), (std::vector<std::int64_t>{2, 5, 24}));
  EXPECT_TRUE(torch::allclose(gated, swiglu_written_out(gate_and_up), 1e-6, 1e-6));
}

class OwnSwigluOnCuda : public OwnKernelOnCuda {};

TEST_P(OwnSwigluOnCuda, OutputAndBothHalvesGradientsAreTheFormulasInFp32) {
  const auto type = GetParam();
  torch::manual_seed(9);
  const auto options = torch::TensorOptions().device(torch::kCUDA).dtype(type);
  // Gates far into both tails, where silu's derivative changes sign and flattens.
  const auto gate_and_up = (torch::randn({3, 7, 2 * 176}, options) * 4).requires_grad_(true);
  ASSERT_TRUE(own_swiglu_applies(gate_and_up));
  const auto gated = swiglu(gate_and_up);
  ASSERT_EQ(gated.scalar_type(), type);
  const auto reference_input = gate_and_up.detach().to(torch::kFloat).requires_grad_(true);
  const auto expected = swiglu_written_out(reference_input);
  const double tol = kernel_tolerance(type);
  EXPECT_TRUE(torch::allclose(gated.to(torch::kFloat), expected, tol, tol))
      << "largest difference " << (gated.to(torch::kFloat) - expected).abs().max().item<double>();

  const auto upstream = torch::randn_like(gated);
  gated.backward(upstream);
  expected.backward(upstream.to(torch::kFloat));
  EXPECT_TRUE(torch::allclose(gate_and_up.grad().to(torch::kFloat), reference_input.grad(), tol, tol))
      << "largest difference "
      << (gate_and_up.grad().to(torch::kFloat) - reference_input.grad()).abs().max().item<double>();
}

TEST_P(OwnSwigluOnCuda, StridedOrOddWidthInputsGoToAten) {
  const auto options = torch::TensorOptions().device(torch::kCUDA).dtype(GetParam());
  const auto odd_width = torch::randn({4, 2 * 5}, options);
  EXPECT_FALSE(own_swiglu_applies(odd_width));
  const auto strided = torch::randn({4, 2 * 64}, options).t().contiguous().t();
  EXPECT_FALSE(own_swiglu_applies(strided));
  EXPECT_TRUE(torch::allclose(swiglu(odd_width).to(torch::kFloat),
                              swiglu_written_out(odd_width.to(torch::kFloat)), kernel_tolerance(GetParam()),
                              kernel_tolerance(GetParam())));
}

INSTANTIATE_TEST_SUITE_P(Types, OwnSwigluOnCuda,
                         ::testing::Values(torch::kFloat, torch::kHalf, torch::kBFloat16));

}  // namespace
}  // namespace dvfslab::torch_backend
