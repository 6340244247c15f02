// Max pooling without indices against ATen's max_pool2d, for every pool the
// built-in CNNs use and the edge cases of PyTorch's output-size rule.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "workload/torch/max_pool.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

const std::vector<MaxPoolOptions> pools = {
    {3, 2, 0, false},  // AlexNet
    {2, 2, 0, false},  // VGG-16
    {3, 2, 1, false},  // ResNet-50's stem
    {3, 2, 0, true},   // GoogLeNet's stem (a last partial window)
    {2, 2, 0, true},   // GoogLeNet's maxpool4
    {3, 1, 1, true},   // GoogLeNet's inception branch 4
    {3, 3, 1, true},   // ceil_mode where the last window would start in the right padding
};

std::string describe(const MaxPoolOptions& o, const torch::Tensor& x) {
  return "kernel " + std::to_string(o.kernel) + " stride " + std::to_string(o.stride) + " padding " +
         std::to_string(o.padding) + (o.ceil_mode ? " ceil" : "") + " on " + std::to_string(x.size(2)) + "x" +
         std::to_string(x.size(3)) + " " + std::string(c10::toString(x.scalar_type())) +
         (x.is_contiguous(torch::MemoryFormat::ChannelsLast) ? " channels-last" : "");
}

void expect_same_as_aten(const torch::TensorOptions& device) {
  torch::manual_seed(3);
  for (const auto& options : pools) {
    for (const int side : {7, 8, 13, 14, 28}) {
      for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
        for (const bool channels_last : {false, true}) {
          auto x = torch::randn({2, 5, side, side + 1}, device.dtype(dtype));
          if (channels_last) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
          const auto expected =
              at::max_pool2d(x, options.kernel, options.stride, options.padding, 1, options.ceil_mode);
          const auto pooled = max_pool_without_indices(x, options);
          ASSERT_TRUE(torch::equal(pooled, expected)) << describe(options, x);
          EXPECT_EQ(pooled.is_contiguous(torch::MemoryFormat::ChannelsLast), channels_last)
              << describe(options, x) << ": the layout is kept";
        }
      }
    }
  }
}

TEST(MaxPool, WithoutIndicesEqualsAtenOnTheCpu) { expect_same_as_aten(torch::TensorOptions()); }

TEST(MaxPool, WithoutIndicesEqualsAtenOnCuda) {
  if (!cuda_usable()) GTEST_SKIP() << "needs a CUDA GPU and a LibTorch with CUDA";
  expect_same_as_aten(torch::TensorOptions().device(torch::kCUDA));
}

// Training keeps ATen's pooling (its backward needs the indices); a frozen pool in
// eval mode takes the path without them and reports no fused layer.
TEST(MaxPool, OnlyAFrozenPoolInEvalModeSkipsTheIndices) {
  MaxPool pool(MaxPoolOptions{3, 2, 0, true});
  auto x = torch::randn({1, 2, 9, 9}, torch::requires_grad());
  pool.forward(x).sum().backward();
  EXPECT_EQ(x.grad().sum().item<double>(), 2 * 16) << "each of the 2x4x4 outputs passes 1 to its maximum";
  EXPECT_EQ(pool.freeze(torch::kFloat), 0);
  pool.eval();
  const auto frozen = pool.forward(x.detach());
  EXPECT_FALSE(frozen.requires_grad());
  EXPECT_TRUE(torch::equal(frozen, at::max_pool2d(x.detach(), 3, 2, 0, 1, true)));
}

}  // namespace
}  // namespace dvfslab::torch_backend
