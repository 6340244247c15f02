// dvfslab's max pooling against ATen's: the output length on CPU (every build), and
// on a CUDA GPU with the own kernels built, outputs and gradients for the pools
// of the four CNNs and for the corners of the window logic (padding, ceil mode,
// channel counts a 16-byte load does not divide, NaN, ties).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "workload/torch/max_pool.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

std::string describe(const MaxPoolOptions& o) {
  return "kernel " + std::to_string(o.kernel) + " stride " + std::to_string(o.stride) + " padding " +
         std::to_string(o.padding) + (o.ceil_mode ? " ceil" : " floor");
}

TEST(MaxPool, OutputLengthIsAtensForEveryWindowStrideAndPadding) {
  int compared = 0;
  for (int kernel = 1; kernel <= 5; ++kernel) {
    for (int stride = 1; stride <= 3; ++stride) {
      for (int padding = 0; padding <= kernel / 2; ++padding) {
        for (const bool ceil_mode : {false, true}) {
          const MaxPoolOptions options{kernel, stride, padding, ceil_mode};
          for (int length = 1; length <= 17; ++length) {
            torch::Tensor pooled;
            try {
              pooled = torch::max_pool2d(torch::zeros({1, 1, length, length}), kernel, stride, padding, 1,
                                         ceil_mode);
            } catch (const c10::Error&) {
              continue;  // ATen refuses windows that leave no output
            }
            EXPECT_EQ(pooled_length(length, options), pooled.size(2))
                << describe(options) << " length " << length;
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 500);
}

TEST(MaxPool, OffTheGpuEveryPoolIsAtens) {
  const MaxPoolOptions options{3, 2, 1, true};
  const auto input = torch::randn({2, 8, 9, 9}).contiguous(torch::MemoryFormat::ChannelsLast);
  EXPECT_FALSE(own_max_pool_applies(input, options));
  MaxPool pool(options);
  pool.use_own_kernel();
  EXPECT_TRUE(torch::equal(pool.forward(input), torch::max_pool2d(input, 3, 2, 1, 1, true)));
}

struct PoolCase {
  std::vector<std::int64_t> nchw;
  MaxPoolOptions options;
};

// Every max-pool input of the four CNNs at batch 2 and 224 × 224 images, and
// shapes for the corners: 3 and 20 channels (no 16-byte loads in bf16), a pool wider
// than its stride with padding, 1 × 1 windows.
std::vector<PoolCase> pool_cases() {
  return {
      {{2, 64, 55, 55}, {3, 2}},           {{2, 192, 27, 27}, {3, 2}},
      {{2, 256, 13, 13}, {3, 2}},          {{2, 64, 224, 224}, {2, 2}},
      {{2, 512, 14, 14}, {2, 2}},          {{2, 64, 112, 112}, {3, 2, 0, true}},
      {{2, 480, 28, 28}, {3, 1, 1, true}}, {{2, 832, 14, 14}, {2, 2, 0, true}},
      {{2, 64, 112, 112}, {3, 2, 1}},      {{2, 3, 11, 11}, {3, 2, 1, true}},
      {{3, 20, 9, 7}, {5, 2, 2}},          {{1, 24, 6, 6}, {1, 1}},
  };
}

class OwnMaxPoolOnCuda : public ::testing::TestWithParam<torch::ScalarType> {
 protected:
  void SetUp() override {
    if (!cuda_usable()) GTEST_SKIP() << "needs a CUDA GPU and a LibTorch with CUDA";
#if !defined(DVFSLAB_OWN_KERNELS)
    GTEST_SKIP() << "this build has no CUDA compiler, so no kernels of its own";
#endif
  }
};

TEST_P(OwnMaxPoolOnCuda, OutputsAndGradientsAreAtens) {
  const auto type = GetParam();
  torch::manual_seed(7);
  for (const auto& [nchw, options] : pool_cases()) {
    // Values on a coarse grid so that windows hold ties, and a NaN in some.
    auto input = torch::randint(-8, 8, nchw, torch::kFloat).div_(4);
    input.view(-1).index_put_({torch::arange(0, input.numel(), 997)}, NAN);
    input = input.to(torch::kCUDA, type).contiguous(torch::MemoryFormat::ChannelsLast);
    ASSERT_TRUE(own_max_pool_applies(input, options)) << describe(options);
    const auto ours_input = input.detach().clone().requires_grad_(true);
    const auto aten_input = input.detach().clone().requires_grad_(true);
    const auto ours = max_pool(ours_input, options);
    const auto aten =
        torch::max_pool2d(aten_input, options.kernel, options.stride, options.padding, 1, options.ceil_mode);
    ASSERT_EQ(ours.sizes(), aten.sizes()) << describe(options);
    EXPECT_TRUE(torch::equal(ours.isnan(), aten.isnan())) << describe(options);
    EXPECT_TRUE(torch::equal(torch::nan_to_num(ours), torch::nan_to_num(aten))) << describe(options);
    EXPECT_TRUE(ours.is_contiguous(torch::MemoryFormat::ChannelsLast));
    // A gradient that differs per output, so a wrong winner shows.
    const auto upstream = torch::rand_like(aten).contiguous(torch::MemoryFormat::ChannelsLast);
    ours.backward(upstream);
    aten.backward(upstream);
    EXPECT_TRUE(
        torch::allclose(ours_input.grad().to(torch::kFloat), aten_input.grad().to(torch::kFloat), 1e-2, 1e-2))
        << describe(options) << ": largest difference "
        << (ours_input.grad() - aten_input.grad()).abs().max().item<float>();
  }
}

TEST_P(OwnMaxPoolOnCuda, NchwInputsAndOtherTypesGoToAten) {
  const MaxPoolOptions options{3, 2};
  const auto nchw = torch::randn({2, 16, 9, 9}, torch::TensorOptions(torch::kCUDA).dtype(GetParam()));
  EXPECT_FALSE(own_max_pool_applies(nchw, options));
  EXPECT_TRUE(torch::equal(max_pool(nchw, options), torch::max_pool2d(nchw, 3, 2)));
  const auto wide_window = nchw.contiguous(torch::MemoryFormat::ChannelsLast);
  EXPECT_FALSE(own_max_pool_applies(wide_window, MaxPoolOptions{17, 1}));
  EXPECT_TRUE(own_max_pool_applies(wide_window, options));
}

INSTANTIATE_TEST_SUITE_P(Types, OwnMaxPoolOnCuda,
                         ::testing::Values(torch::kFloat, torch::kHalf, torch::kBFloat16));

}  // namespace
}  // namespace dvfslab::torch_backend
