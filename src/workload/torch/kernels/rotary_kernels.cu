// The rotary-embedding kernel (see rotary_kernels.hpp). Each thread rotates 16
// bytes of a head's first half together with the matching 16 bytes of its second
// half, so both halves are read and written once, in aligned packs.
#include "device_elements.cuh"
#include "rotary_kernels.hpp"

namespace dvfslab::torch_backend::kernels {
namespace {

template <typename T>
__global__ void rotary_kernel(RotaryShape shape, RotaryArgs args) {
  constexpr int lanes = 16 / sizeof(T);
  const std::int64_t half = shape.head_dim / 2;
  const std::int64_t packs_per_half = half / lanes;
  const std::int64_t total = shape.batch * shape.tokens * shape.heads * packs_per_half;
  for (std::int64_t index = first_index(); index < total; index += grid_stride()) {
    std::int64_t rest = index;
    const std::int64_t feature = rest % packs_per_half * lanes;
    rest /= packs_per_half;
    const std::int64_t head = rest % shape.heads;
    rest /= shape.heads;
    const std::int64_t token = rest % shape.tokens;
    const std::int64_t batch = rest / shape.tokens;
    const RotaryStrides& in = args.input_strides;
    const RotaryStrides& out = args.output_strides;
    const T* source =
        static_cast<const T*>(args.input) + batch * in.batch + token * in.token + head * in.head + feature;
    T* target = static_cast<T*>(args.output) + batch * out.batch + token * out.token + head * out.head + feature;
    const float* cos = args.cos + token * shape.head_dim + feature;
    const float* sin = args.signed_sin + token * shape.head_dim + feature;
    const auto first = *reinterpret_cast<const Pack<T, lanes>*>(source);
    const auto second = *reinterpret_cast<const Pack<T, lanes>*>(source + half);
    Pack<T, lanes> rotated_first, rotated_second;
#pragma unroll
    for (int lane = 0; lane < lanes; ++lane) {
      const float x1 = widen(first.value[lane]);
      const float x2 = widen(second.value[lane]);
      const float sin1 = args.transpose ? sin[half + lane] : sin[lane];
      const float sin2 = args.transpose ? sin[lane] : sin[half + lane];
      rotated_first.value[lane] = narrow<T>(cos[lane] * x1 + sin1 * x2);
      rotated_second.value[lane] = narrow<T>(cos[half + lane] * x2 + sin2 * x1);
    }
    *reinterpret_cast<Pack<T, lanes>*>(target) = rotated_first;
    *reinterpret_cast<Pack<T, lanes>*>(target + half) = rotated_second;
  }
}

template <typename T>
cudaError_t rotary_as(const RotaryShape& shape, const RotaryArgs& args, cudaStream_t stream) {
  constexpr int lanes = 16 / sizeof(T);
  const std::int64_t packs = shape.batch * shape.tokens * shape.heads * (shape.head_dim / 2 / lanes);
  rotary_kernel<T><<<grid_blocks(packs), threads_per_block, 0, stream>>>(shape, args);
  return cudaGetLastError();
}

}  // namespace

cudaError_t rotary_embedding(ElementType type, const RotaryShape& shape, const RotaryArgs& args,
                             cudaStream_t stream) {
  switch (type) {
    case ElementType::float32: return rotary_as<float>(shape, args, stream);
    case ElementType::float16: return rotary_as<__half>(shape, args, stream);
    case ElementType::bfloat16: return rotary_as<__nv_bfloat16>(shape, args, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace dvfslab::torch_backend::kernels
