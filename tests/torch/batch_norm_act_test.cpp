// Training batch norm + ReLU (+ residual): on every build, the wrapper against the
// formula written out (what the own kernels must reproduce); on a CUDA GPU with the
// own kernels built, the kernels against ATen's modules in FP32, forward, running
// statistics and every gradient.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "workload/torch/batch_norm_act.hpp"
#include "workload/torch/own_kernels.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

torch::nn::BatchNorm2d trained_norm(int channels, double eps, const torch::Device& device) {
  torch::nn::BatchNorm2d norm(torch::nn::BatchNorm2dOptions(channels).eps(eps));
  {
    torch::NoGradGuard no_grad;
    norm->weight.uniform_(0.5, 1.5);
    norm->bias.uniform_(-0.3, 0.3);
    norm->running_mean.uniform_(-0.2, 0.2);
    norm->running_var.uniform_(0.8, 1.2);
  }
  norm->to(device);
  norm->train();
  return norm;
}

TEST(BatchNormAct, ComputesTheTrainingFormulaAndUpdatesTheRunningStatistics) {
  torch::manual_seed(3);
  auto norm = trained_norm(8, 1e-3, torch::kCPU);
  const auto old_mean = norm->running_mean.clone();
  const auto old_var = norm->running_var.clone();
  const auto input = (torch::randn({3, 8, 5, 4}) * 2 + 0.5).requires_grad_(true);
  const auto residual = torch::randn({3, 8, 5, 4}).requires_grad_(true);
  EXPECT_FALSE(own_batch_norm_applies(input, *norm, residual)) << "own kernels run on CUDA only";

  const auto output = train_batch_norm_act(input, *norm, residual, true);

  const auto x = input.detach();
  const auto mean = x.mean({0, 2, 3});
  const auto biased = x.var({0, 2, 3}, /*unbiased=*/false);
  const auto view = [](const torch::Tensor& t) { return t.view({1, -1, 1, 1}); };
  const auto expected =
      torch::relu((x - view(mean)) / torch::sqrt(view(biased) + 1e-3) * view(norm->weight.detach()) +
                  view(norm->bias.detach()) + residual.detach());
  EXPECT_TRUE(torch::allclose(output.detach(), expected, 1e-5, 1e-5));
  const double rows = 3 * 5 * 4;
  EXPECT_TRUE(torch::allclose(norm->running_mean, 0.9 * old_mean + 0.1 * mean, 1e-6, 1e-6));
  EXPECT_TRUE(
      torch::allclose(norm->running_var, 0.9 * old_var + 0.1 * biased * rows / (rows - 1), 1e-6, 1e-6));
  EXPECT_EQ(norm->num_batches_tracked.item<std::int64_t>(), 1);
  // The residual's gradient is the output gradient where the ReLU let it through.
  const auto upstream = torch::randn_like(expected);
  output.backward(upstream);
  EXPECT_TRUE(torch::equal(residual.grad(), upstream * (expected > 0)));
}

struct NormCase {
  std::vector<std::int64_t> nchw;
  bool residual, relu;
};

class OwnBatchNormOnCuda : public ::testing::TestWithParam<torch::ScalarType> {
 protected:
  void SetUp() override {
    if (!cuda_usable()) GTEST_SKIP() << "needs a CUDA GPU and a LibTorch with CUDA";
    if (!own_kernels_built()) GTEST_SKIP() << "this build has no CUDA compiler, so no kernels of its own";
  }
};

double largest_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat) - b.to(torch::kFloat)).abs().max().item<double>();
}

TEST_P(OwnBatchNormOnCuda, ForwardRunningStatisticsAndGradientsAreAtens) {
  const auto type = GetParam();
  // ResNet-50's first and last shapes (batch 2), a residual block's end, GoogLeNet's
  // 24-channel branch, a plain batch norm, and one row per channel.
  const std::vector<NormCase> cases = {
      {{2, 64, 56, 56}, false, true}, {{2, 2048, 7, 7}, true, true},  {{4, 256, 14, 14}, true, true},
      {{2, 24, 5, 3}, false, true},   {{2, 128, 9, 9}, false, false}, {{3, 16, 1, 1}, false, true},
      {{2, 2048, 7, 7}, false, true}, {{2, 64, 56, 56}, true, true},  {{2, 256, 14, 14}, true, false}};
  for (const auto& [nchw, with_residual, relu] : cases) {
    const std::string what = std::to_string(nchw[1]) + " channels" + (with_residual ? ", residual" : "") +
                             (relu ? ", relu" : ", no relu");
    torch::manual_seed(11);
    auto ours_norm = trained_norm(static_cast<int>(nchw[1]), 1e-5, torch::kCUDA);
    auto aten_norm = trained_norm(static_cast<int>(nchw[1]), 1e-5, torch::kCUDA);
    {
      torch::NoGradGuard no_grad;
      for (const auto& item : ours_norm->named_parameters())
        aten_norm->named_parameters()[item.key()].copy_(item.value());
      for (const auto& item : ours_norm->named_buffers())
        aten_norm->named_buffers()[item.key()].copy_(item.value());
    }
    const auto cuda = torch::TensorOptions(torch::kCUDA).dtype(type);
    const auto x = (torch::randn(nchw, cuda) * 1.5 + 0.25).contiguous(torch::MemoryFormat::ChannelsLast);
    const auto r = torch::randn(nchw, cuda).contiguous(torch::MemoryFormat::ChannelsLast);
    const auto ours_x = x.clone().requires_grad_(true);
    const auto ours_r = r.clone().requires_grad_(true);
    // The reference runs ATen's batch norm in FP32 on the same 16-bit inputs: the
    // own kernels also compute in FP32 and round once, where a 16-bit ATen chain
    // rounds after the batch norm and again after the residual.
    const auto reference_x = x.to(torch::kFloat).requires_grad_(true);
    const auto reference_r = r.to(torch::kFloat).requires_grad_(true);
    const torch::Tensor no_residual;
    ASSERT_TRUE(own_batch_norm_applies(ours_x, *ours_norm, with_residual ? ours_r : no_residual)) << what;

    const auto ours = train_batch_norm_act(ours_x, *ours_norm, with_residual ? ours_r : no_residual, relu);
    auto before_relu = aten_norm->forward(reference_x);
    if (with_residual) before_relu = before_relu + reference_r;
    const auto reference = relu ? torch::relu(before_relu) : before_relu;
    EXPECT_LT(largest_difference(ours, reference), 0.05) << what;
    EXPECT_TRUE(torch::allclose(ours_norm->running_mean, aten_norm->running_mean, 1e-4, 1e-4)) << what;
    EXPECT_TRUE(torch::allclose(ours_norm->running_var, aten_norm->running_var, 1e-3, 1e-4)) << what;
    EXPECT_EQ(ours_norm->num_batches_tracked.item<std::int64_t>(), 1);
    // Where the value before the ReLU is within rounding of 0 the two may keep or
    // drop a different element; beyond that the masks agree.
    const auto mask = relu ? (ours > 0).to(torch::kFloat) : torch::ones_like(reference);
    const auto reference_mask = relu ? (reference > 0).to(torch::kFloat) : torch::ones_like(reference);
    EXPECT_LE((mask != reference_mask).sum().item<std::int64_t>(), reference.numel() / 10000) << what;

    // The gradients are compared through the kernels' own mask, so an element on
    // the ReLU's edge does not count as a difference.
    const auto upstream = torch::randn_like(ours).contiguous(torch::MemoryFormat::ChannelsLast);
    ours.backward(upstream);
    before_relu.backward(upstream.to(torch::kFloat) * mask);
    EXPECT_LT(largest_difference(ours_x.grad(), reference_x.grad()), 0.05) << what;
    const auto relative = [](const torch::Tensor& a, const torch::Tensor& b) {
      return largest_difference(a, b) / (1 + b.abs().max().item<double>());
    };
    EXPECT_LT(relative(ours_norm->weight.grad(), aten_norm->weight.grad()), 0.01) << what;
    EXPECT_LT(relative(ours_norm->bias.grad(), aten_norm->bias.grad()), 0.01) << what;
    if (with_residual) {
      EXPECT_LT(largest_difference(ours_r.grad(), reference_r.grad()), 0.02) << what;
    }
  }
}

// The forward keeps the ReLU's mask as bits of the stored output: the gradient
// passes exactly where that output is positive. With γ of 1e-9 every FP16 output
// rounds to zero though the value before rounding is positive half the time, so a
// mask taken before rounding would let those gradients through.
TEST_P(OwnBatchNormOnCuda, TheGradientPassesExactlyWhereTheStoredOutputIsPositive) {
  const auto type = GetParam();
  const auto cuda = torch::TensorOptions(torch::kCUDA).dtype(type);
  for (const double gain : {1.0, 1e-9}) {
    torch::manual_seed(5);
    auto norm = trained_norm(64, 1e-5, torch::kCUDA);
    {
      torch::NoGradGuard no_grad;
      norm->weight.mul_(gain);
      norm->bias.mul_(gain);
    }
    const auto x = torch::randn({2, 64, 8, 8}, cuda).contiguous(torch::MemoryFormat::ChannelsLast);
    const auto residual = (torch::randn({2, 64, 8, 8}, cuda) * gain)
                              .contiguous(torch::MemoryFormat::ChannelsLast)
                              .requires_grad_(true);
    ASSERT_TRUE(own_batch_norm_applies(x, *norm, residual));
    const auto output = train_batch_norm_act(x, *norm, residual, true);
    const auto upstream = torch::randn_like(output).contiguous(torch::MemoryFormat::ChannelsLast);
    output.backward(upstream);
    const auto passed = (output > 0).to(type);
    EXPECT_TRUE(torch::equal(residual.grad(), upstream * passed)) << "γ × " << gain;
    if (type == torch::kHalf && gain < 1) {
      EXPECT_EQ(passed.sum().item<double>(), 0) << "every FP16 output rounds to zero";
      EXPECT_EQ(norm->weight.grad().abs().max().item<double>(), 0);
    } else {
      EXPECT_GT(passed.sum().item<double>(), 0.25 * static_cast<double>(passed.numel()));
    }
  }
}

TEST_P(OwnBatchNormOnCuda, OtherLayoutsAndChannelCountsGoToAten) {
  auto norm = trained_norm(12, 1e-5, torch::kCUDA);
  const auto cuda = torch::TensorOptions(torch::kCUDA).dtype(GetParam());
  const torch::Tensor none;
  EXPECT_FALSE(own_batch_norm_applies(
      torch::randn({2, 12, 4, 4}, cuda).contiguous(torch::MemoryFormat::ChannelsLast), *norm, none))
      << "12 channels are not a multiple of 8";
  auto norm16 = trained_norm(16, 1e-5, torch::kCUDA);
  EXPECT_FALSE(own_batch_norm_applies(torch::randn({2, 16, 4, 4}, cuda), *norm16, none)) << "NCHW";
  EXPECT_FALSE(own_batch_norm_applies(torch::randn({2, 16, 4, 4}, torch::TensorOptions(torch::kCUDA))
                                          .contiguous(torch::MemoryFormat::ChannelsLast),
                                      *norm16, none))
      << "FP32 input";
  EXPECT_TRUE(own_batch_norm_applies(
      torch::randn({2, 16, 4, 4}, cuda).contiguous(torch::MemoryFormat::ChannelsLast), *norm16, none));
}

INSTANTIATE_TEST_SUITE_P(Types, OwnBatchNormOnCuda, ::testing::Values(torch::kBFloat16, torch::kHalf));

}  // namespace
}  // namespace dvfslab::torch_backend
