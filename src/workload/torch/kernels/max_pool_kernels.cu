// The max-pooling kernels (see max_pool_kernels.hpp). One thread per output (or,
// backward, input) pixel and group of channels: neighbouring threads read
// neighbouring channels, so every load is coalesced in the NHWC layout.
#include "device_elements.cuh"
#include "max_pool_kernels.hpp"

namespace dvfslab::torch_backend::kernels {
namespace {

// One thread's place in an n × rows × columns × channel-groups tensor, groups fastest.
struct Place {
  std::int64_t n, row, column, group;
};

__device__ Place place_of(std::int64_t index, std::int64_t groups, std::int64_t rows, std::int64_t columns) {
  const std::int64_t group = index % groups;
  index /= groups;
  const std::int64_t column = index % columns;
  index /= columns;
  return {index / rows, index % rows, column, group};
}

template <typename T, int lanes>
__global__ void forward_kernel(PoolShape s, const T* __restrict__ input, T* __restrict__ output,
                               std::uint8_t* __restrict__ argmax) {
  const std::int64_t groups = s.c / lanes;
  const std::int64_t total = s.n * s.out_h * s.out_w * groups;
  for (std::int64_t index = first_index(); index < total; index += grid_stride()) {
    const auto [n, oh, ow, group] = place_of(index, groups, s.out_h, s.out_w);
    const std::int64_t top = oh * s.stride_h - s.pad_h;
    const std::int64_t left = ow * s.stride_w - s.pad_w;
    // As ATen: the first element inside the input holds the position until a larger
    // value (or a NaN, which then stays unless another NaN follows) replaces it.
    const int first_inside = static_cast<int>((top < 0 ? -top : 0) * s.kernel_w + (left < 0 ? -left : 0));
    float best[lanes];
    int where[lanes];
    for (int lane = 0; lane < lanes; ++lane) {
      best[lane] = -INFINITY;
      where[lane] = first_inside;
    }
    for (int dy = 0; dy < s.kernel_h; ++dy) {
      const std::int64_t y = top + dy;
      if (y < 0 || y >= s.h) continue;
      for (int dx = 0; dx < s.kernel_w; ++dx) {
        const std::int64_t x = left + dx;
        if (x < 0 || x >= s.w) continue;
        const auto pack =
            *reinterpret_cast<const Pack<T, lanes>*>(input + ((n * s.h + y) * s.w + x) * s.c + group * lanes);
        for (int lane = 0; lane < lanes; ++lane) {
          const float value = widen(pack.value[lane]);
          if (value > best[lane] || isnan(value)) {
            best[lane] = value;
            where[lane] = dy * s.kernel_w + dx;
          }
        }
      }
    }
    Pack<T, lanes> result;
    for (int lane = 0; lane < lanes; ++lane) result.value[lane] = narrow<T>(best[lane]);
    const std::int64_t at = ((n * s.out_h + oh) * s.out_w + ow) * s.c + group * lanes;
    *reinterpret_cast<Pack<T, lanes>*>(output + at) = result;
    if (argmax != nullptr) {
      for (int lane = 0; lane < lanes; ++lane) argmax[at + lane] = static_cast<std::uint8_t>(where[lane]);
    }
  }
}

// The first window index (along one axis) that covers `position`, and the last.
__device__ void covering_windows(std::int64_t position, int kernel, int stride, int pad, std::int64_t outputs,
                                 std::int64_t& first, std::int64_t& last) {
  const std::int64_t lowest_start = position + pad - kernel + 1;
  first = lowest_start <= 0 ? 0 : (lowest_start + stride - 1) / stride;
  last = (position + pad) / stride;
  if (last > outputs - 1) last = outputs - 1;
}

template <typename T, int lanes>
__global__ void backward_kernel(PoolShape s, const T* __restrict__ grad_output,
                                const std::uint8_t* __restrict__ argmax, T* __restrict__ grad_input) {
  const std::int64_t groups = s.c / lanes;
  const std::int64_t total = s.n * s.h * s.w * groups;
  for (std::int64_t index = first_index(); index < total; index += grid_stride()) {
    const auto [n, y, x, group] = place_of(index, groups, s.h, s.w);
    std::int64_t first_row, last_row, first_column, last_column;
    covering_windows(y, s.kernel_h, s.stride_h, s.pad_h, s.out_h, first_row, last_row);
    covering_windows(x, s.kernel_w, s.stride_w, s.pad_w, s.out_w, first_column, last_column);
    float sum[lanes] = {};
    for (std::int64_t oh = first_row; oh <= last_row; ++oh) {
      const std::int64_t dy = y - (oh * s.stride_h - s.pad_h);
      for (std::int64_t ow = first_column; ow <= last_column; ++ow) {
        const int position = static_cast<int>(dy * s.kernel_w + x - (ow * s.stride_w - s.pad_w));
        const std::int64_t at = ((n * s.out_h + oh) * s.out_w + ow) * s.c + group * lanes;
        const auto grads = *reinterpret_cast<const Pack<T, lanes>*>(grad_output + at);
        for (int lane = 0; lane < lanes; ++lane) {
          if (argmax[at + lane] == position) sum[lane] += widen(grads.value[lane]);
        }
      }
    }
    Pack<T, lanes> result;
    for (int lane = 0; lane < lanes; ++lane) result.value[lane] = narrow<T>(sum[lane]);
    *reinterpret_cast<Pack<T, lanes>*>(grad_input + ((n * s.h + y) * s.w + x) * s.c + group * lanes) = result;
  }
}

template <typename T>
cudaError_t forward_as(const PoolShape& shape, const void* input, void* output, std::uint8_t* argmax,
                       bool vector, cudaStream_t stream) {
  constexpr int lanes = 16 / sizeof(T);
  const auto* in = static_cast<const T*>(input);
  auto* out = static_cast<T*>(output);
  const std::int64_t outputs = shape.n * shape.out_h * shape.out_w * shape.c;
  if (vector)
    forward_kernel<T, lanes>
        <<<grid_blocks(outputs / lanes), threads_per_block, 0, stream>>>(shape, in, out, argmax);
  else
    forward_kernel<T, 1><<<grid_blocks(outputs), threads_per_block, 0, stream>>>(shape, in, out, argmax);
  return cudaGetLastError();
}

template <typename T>
cudaError_t backward_as(const PoolShape& shape, const void* grad_output, const std::uint8_t* argmax,
                        void* grad_input, bool vector, cudaStream_t stream) {
  constexpr int lanes = 16 / sizeof(T);
  const auto* grads = static_cast<const T*>(grad_output);
  auto* result = static_cast<T*>(grad_input);
  const std::int64_t inputs = shape.n * shape.h * shape.w * shape.c;
  if (vector)
    backward_kernel<T, lanes>
        <<<grid_blocks(inputs / lanes), threads_per_block, 0, stream>>>(shape, grads, argmax, result);
  else
    backward_kernel<T, 1><<<grid_blocks(inputs), threads_per_block, 0, stream>>>(shape, grads, argmax, result);
  return cudaGetLastError();
}

}  // namespace

cudaError_t max_pool_forward(ElementType type, const PoolShape& shape, const void* input, void* output,
                             std::uint8_t* argmax, bool vector, cudaStream_t stream) {
  switch (type) {
    case ElementType::float32: return forward_as<float>(shape, input, output, argmax, vector, stream);
    case ElementType::float16: return forward_as<__half>(shape, input, output, argmax, vector, stream);
    case ElementType::bfloat16: return forward_as<__nv_bfloat16>(shape, input, output, argmax, vector, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t max_pool_backward(ElementType type, const PoolShape& shape, const void* grad_output,
                              const std::uint8_t* argmax, void* grad_input, bool vector,
                              cudaStream_t stream) {
  switch (type) {
    case ElementType::float32:
      return backward_as<float>(shape, grad_output, argmax, grad_input, vector, stream);
    case ElementType::float16:
      return backward_as<__half>(shape, grad_output, argmax, grad_input, vector, stream);
    case ElementType::bfloat16:
      return backward_as<__nv_bfloat16>(shape, grad_output, argmax, grad_input, vector, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace dvfslab::torch_backend::kernels
