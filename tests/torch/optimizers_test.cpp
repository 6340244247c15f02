// The optimizers' updates: the foreach kernels follow PyTorch's formulas (values
// worked out by hand below), and the fused kernels agree with them on CUDA.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "workload/torch/fused_steps.hpp"
#include "workload/torch/optimizers.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

torch::Tensor scalar_parameter(double value) {
  return torch::full({1}, value, torch::TensorOptions().dtype(torch::kDouble)).requires_grad_(true);
}

void set_gradient(torch::Tensor& parameter, double value) {
  parameter.mutable_grad() = torch::full_like(parameter, value);
}

// lr 0.1, momentum 0.9, weight decay 0.01, p = 1, g = 0.5 each step:
// step 1: buffer = 0.5 + 0.01·1 = 0.51, p = 1 − 0.051 = 0.949
// step 2: buffer = 0.9·0.51 + 0.5 + 0.01·0.949 = 0.96849, p = 0.949 − 0.096849 = 0.852151
TEST(Optimizers, SgdMomentumFollowsPyTorchsUpdate) {
  auto parameter = scalar_parameter(1.0);
  SgdMomentum sgd({parameter}, 0.1, 0.9, 0.01);
  EXPECT_FALSE(sgd.fused()) << "no fused kernel for CPU tensors";
  set_gradient(parameter, 0.5);
  sgd.step();
  EXPECT_NEAR(parameter.item<double>(), 0.949, 1e-12);
  set_gradient(parameter, 0.5);
  sgd.step();
  EXPECT_NEAR(parameter.item<double>(), 0.852151, 1e-12);
}

// lr 0.1, weight decay 0.01, betas 0.9/0.999, p = 1, g = 0.5 each step. With a
// constant gradient the bias-corrected moments are m̂ = 0.5 and v̂ = 0.25, so each
// step subtracts lr·0.5/√0.25 = 0.1 after the decay p·(1 − lr·0.01):
// step 1: 0.999 − 0.1 = 0.899; step 2: 0.899·0.999 − 0.1 = 0.798101.
// The step count is a float32 device tensor (as in PyTorch's capturable AdamW), so
// 1 − 0.999² carries float rounding: a few 1e-6 on the result.
TEST(Optimizers, AdamWFollowsPyTorchsUpdate) {
  auto parameter = scalar_parameter(1.0);
  AdamW adamw({parameter}, 0.1, 0.01);
  EXPECT_FALSE(adamw.fused());
  set_gradient(parameter, 0.5);
  adamw.step();
  EXPECT_NEAR(parameter.item<double>(), 0.899, 1e-5);
  set_gradient(parameter, 0.5);
  adamw.step();
  EXPECT_NEAR(parameter.item<double>(), 0.798101, 1e-5);
}

TEST(Optimizers, ParametersWithoutGradientsStayPut) {
  auto moved = scalar_parameter(1.0);
  auto frozen = scalar_parameter(2.0);
  SgdMomentum sgd({moved, frozen}, 0.1, 0.9, 0.0);
  set_gradient(moved, 1.0);
  sgd.step();
  EXPECT_NEAR(moved.item<double>(), 0.9, 1e-12);
  EXPECT_EQ(frozen.item<double>(), 2.0);
}

// Three steps of each optimizer on the same random parameters and gradients, once
// with the fused kernel and once with foreach kernels.
template <typename MakeOptimizer>
void expect_fused_matches_foreach(MakeOptimizer make_optimizer) {
  const torch::Device cuda(torch::kCUDA);
  torch::manual_seed(7);
  std::vector<torch::Tensor> fused_parameters, foreach_parameters;
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{64, 3, 3, 3}, {64}, {1000, 256}, {1000}}) {
    auto values = torch::randn(shape, torch::TensorOptions().device(cuda));
    fused_parameters.push_back(values.clone().requires_grad_(true));
    foreach_parameters.push_back(values.clone().requires_grad_(true));
  }
  auto fused = make_optimizer(fused_parameters, StepKernels::fused_where_available);
  auto foreach = make_optimizer(foreach_parameters, StepKernels::foreach);
  ASSERT_TRUE(fused->fused());
  ASSERT_FALSE(foreach->fused());
  for (int step = 0; step < 3; ++step) {
    for (std::size_t i = 0; i < fused_parameters.size(); ++i) {
      const auto gradient = torch::randn_like(fused_parameters[i]);
      fused_parameters[i].mutable_grad() = gradient.clone();
      foreach_parameters[i].mutable_grad() = gradient.clone();
    }
    fused->step();
    foreach
      ->step();
  }
  for (std::size_t i = 0; i < fused_parameters.size(); ++i) {
    EXPECT_TRUE(torch::allclose(fused_parameters[i], foreach_parameters[i], 1e-5, 1e-6))
        << "parameter " << i << " differs by up to "
        << (fused_parameters[i] - foreach_parameters[i]).abs().max().item<double>();
  }
}

TEST(Optimizers, FusedAndForeachStepsAgreeOnCuda) {
  if (!cuda_usable() || !fused_steps_available(torch::Device(torch::kCUDA))) {
    GTEST_SKIP() << "needs a CUDA GPU and a LibTorch with fused optimizer kernels (2.2 or later)";
  }
  expect_fused_matches_foreach([](std::vector<torch::Tensor> parameters, StepKernels kernels) {
    return std::make_unique<SgdMomentum>(std::move(parameters), 0.01, 0.9, 1e-4, kernels);
  });
  expect_fused_matches_foreach([](std::vector<torch::Tensor> parameters, StepKernels kernels) {
    return std::make_unique<AdamW>(std::move(parameters), 1e-3, 0.01, kernels);
  });
}

}  // namespace
}  // namespace dvfslab::torch_backend
