#include "workload/torch/max_pool.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

namespace dvfslab::torch_backend {
namespace {

// PyTorch's pooling output size: with ceil_mode a last partial window counts when
// it starts inside the input or its left padding.
std::int64_t pooled_size(std::int64_t size, const MaxPoolOptions& options) {
  const std::int64_t span = size + 2 * options.padding - options.kernel;
  std::int64_t out = (span + (options.ceil_mode ? options.stride - 1 : 0)) / options.stride + 1;
  if (options.ceil_mode && (out - 1) * options.stride >= size + options.padding) --out;
  return out;
}

}  // namespace

torch::Tensor max_pool_without_indices(const torch::Tensor& input, const MaxPoolOptions& options) {
  torch::NoGradGuard no_grad;
  const auto height = input.size(2), width = input.size(3);
  const auto out_height = pooled_size(height, options), out_width = pooled_size(width, options);
  // The windows' extent, the input with its padding: -inf where a window leaves it.
  const auto padded_height = std::max(height + options.padding, (out_height - 1) * options.stride + options.kernel);
  const auto padded_width = std::max(width + options.padding, (out_width - 1) * options.stride + options.kernel);
  auto padded = input;
  if (options.padding > 0 || padded_height > height || padded_width > width) {
    padded = at::full({input.size(0), input.size(1), padded_height, padded_width},
                      -std::numeric_limits<double>::infinity(),
                      input.options().memory_format(input.suggest_memory_format()));
    padded.narrow(2, options.padding, height).narrow(3, options.padding, width).copy_(input);
  }
  const auto strides = padded.strides();
  const auto windows = padded.as_strided(
      {input.size(0), input.size(1), out_height, out_width, options.kernel, options.kernel},
      {strides[0], strides[1], strides[2] * options.stride, strides[3] * options.stride, strides[2], strides[3]},
      padded.storage_offset());
  return windows.amax({4, 5}).contiguous(input.suggest_memory_format());
}

torch::Tensor MaxPool::forward(const torch::Tensor& input) {
  if (frozen_ && !is_training()) return max_pool_without_indices(input, options_);
  return at::max_pool2d(input, options_.kernel, options_.stride, options_.padding, /*dilation=*/1,
                        options_.ceil_mode);
}

int MaxPool::freeze(torch::ScalarType /*dtype*/) {
  frozen_ = true;
  return 0;
}

}  // namespace dvfslab::torch_backend
