#pragma once
// What dvfslab's kernels share on the device: 16-bit elements widened to FP32 for
// arithmetic and narrowed back for storage, several elements moved as one aligned
// load or store, and the indices and launch size of a grid-stride loop.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace dvfslab::torch_backend::kernels {

__device__ inline float widen(float x) { return x; }
__device__ inline float widen(__half x) { return __half2float(x); }
__device__ inline float widen(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ T narrow(float x);
template <>
__device__ inline float narrow<float>(float x) {
  return x;
}
template <>
__device__ inline __half narrow<__half>(float x) {
  return __float2half(x);
}
template <>
__device__ inline __nv_bfloat16 narrow<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}

// `lanes` elements moved as one aligned load or store.
template <typename T, int lanes>
struct alignas(sizeof(T) * lanes) Pack {
  T value[lanes];
};

// The first index of this thread in a grid-stride loop, and the stride.
__device__ inline std::int64_t first_index() {
  return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
}
__device__ inline std::int64_t grid_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

inline constexpr int threads_per_block = 256;
inline constexpr int warp_size = 32;

// The most blocks a kernel is launched with along a grid dimension: CUDA's limit on
// y and z, and more than fill any current GPU along x.
inline constexpr std::int64_t most_grid_blocks = 65535;

// Blocks of threads_per_block for `work` items, one per thread; past the most
// blocks the grid-stride loop covers the rest.
inline unsigned grid_blocks(std::int64_t work) {
  const std::int64_t wanted = (work + threads_per_block - 1) / threads_per_block;
  return static_cast<unsigned>(wanted < 1 ? 1 : (wanted > most_grid_blocks ? most_grid_blocks : wanted));
}

}  // namespace dvfslab::torch_backend::kernels
