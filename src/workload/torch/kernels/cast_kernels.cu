// The conversion kernel (see cast_kernels.hpp): each thread converts one pack of
// as many elements as 16 bytes of the wider type hold, then the last count % lanes
// elements one by one.
#include "cast_kernels.hpp"
#include "device_elements.cuh"

namespace dvfslab::torch_backend::kernels {
namespace {

template <typename From, typename To>
inline constexpr int lanes_of = 16 / (sizeof(From) > sizeof(To) ? sizeof(From) : sizeof(To));

template <typename From, typename To>
__global__ void cast_kernel(std::int64_t count, const From* __restrict__ input, To* __restrict__ output) {
  constexpr int lanes = lanes_of<From, To>;
  const std::int64_t packs = count / lanes;
  for (std::int64_t index = first_index(); index < packs; index += grid_stride()) {
    const auto source = reinterpret_cast<const Pack<From, lanes>*>(input)[index];
    Pack<To, lanes> converted;
#pragma unroll
    for (int lane = 0; lane < lanes; ++lane) converted.value[lane] = narrow<To>(widen(source.value[lane]));
    reinterpret_cast<Pack<To, lanes>*>(output)[index] = converted;
  }
  for (std::int64_t index = packs * lanes + first_index(); index < count; index += grid_stride())
    output[index] = narrow<To>(widen(input[index]));
}

template <typename From, typename To>
cudaError_t cast_as(std::int64_t count, const void* input, void* output, cudaStream_t stream) {
  const std::int64_t packs = count / lanes_of<From, To>;
  cast_kernel<From, To><<<grid_blocks(packs > 0 ? packs : 1), threads_per_block, 0, stream>>>(
      count, static_cast<const From*>(input), static_cast<To*>(output));
  return cudaGetLastError();
}

template <typename From>
cudaError_t cast_from(ElementType to, std::int64_t count, const void* input, void* output,
                      cudaStream_t stream) {
  switch (to) {
    case ElementType::float32: return cast_as<From, float>(count, input, output, stream);
    case ElementType::float16: return cast_as<From, __half>(count, input, output, stream);
    case ElementType::bfloat16: return cast_as<From, __nv_bfloat16>(count, input, output, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t cast_elements(ElementType from, ElementType to, std::int64_t count, const void* input,
                          void* output, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  switch (from) {
    case ElementType::float32: return cast_from<float>(to, count, input, output, stream);
    case ElementType::float16: return cast_from<__half>(to, count, input, output, stream);
    case ElementType::bfloat16: return cast_from<__nv_bfloat16>(to, count, input, output, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace dvfslab::torch_backend::kernels
