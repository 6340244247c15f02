// The SwiGLU kernels (see swiglu_kernels.hpp): each thread takes 16 bytes of
// outputs and the matching 16 bytes of gate and of up, all arithmetic in FP32.
#include "device_elements.cuh"
#include "swiglu_kernels.hpp"

namespace dvfslab::torch_backend::kernels {
namespace {

__device__ inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// Where a thread's pack of outputs sits: the row, and the first column.
struct Cell {
  std::int64_t row, column;
};

template <int lanes>
__device__ Cell cell_of(std::int64_t index, const SwigluShape& shape) {
  const std::int64_t packs_per_row = shape.width / lanes;
  return {index / packs_per_row, index % packs_per_row * lanes};
}

template <typename T>
__global__ void forward_kernel(SwigluShape shape, const T* __restrict__ gate_and_up, T* __restrict__ output) {
  constexpr int lanes = 16 / sizeof(T);
  const std::int64_t total = shape.rows * (shape.width / lanes);
  for (std::int64_t index = first_index(); index < total; index += grid_stride()) {
    const Cell cell = cell_of<lanes>(index, shape);
    const T* row = gate_and_up + cell.row * 2 * shape.width + cell.column;
    const auto gate = *reinterpret_cast<const Pack<T, lanes>*>(row);
    const auto up = *reinterpret_cast<const Pack<T, lanes>*>(row + shape.width);
    Pack<T, lanes> result;
#pragma unroll
    for (int lane = 0; lane < lanes; ++lane) {
      const float g = widen(gate.value[lane]);
      result.value[lane] = narrow<T>(g * sigmoid(g) * widen(up.value[lane]));
    }
    *reinterpret_cast<Pack<T, lanes>*>(output + cell.row * shape.width + cell.column) = result;
  }
}

template <typename T>
__global__ void backward_kernel(SwigluShape shape, const T* __restrict__ gate_and_up,
                                const T* __restrict__ grad_output, T* __restrict__ grad_gate_and_up) {
  constexpr int lanes = 16 / sizeof(T);
  const std::int64_t total = shape.rows * (shape.width / lanes);
  for (std::int64_t index = first_index(); index < total; index += grid_stride()) {
    const Cell cell = cell_of<lanes>(index, shape);
    const std::int64_t input_at = cell.row * 2 * shape.width + cell.column;
    const auto gate = *reinterpret_cast<const Pack<T, lanes>*>(gate_and_up + input_at);
    const auto up = *reinterpret_cast<const Pack<T, lanes>*>(gate_and_up + input_at + shape.width);
    const auto grad =
        *reinterpret_cast<const Pack<T, lanes>*>(grad_output + cell.row * shape.width + cell.column);
    Pack<T, lanes> grad_gate, grad_up;
#pragma unroll
    for (int lane = 0; lane < lanes; ++lane) {
      const float g = widen(gate.value[lane]);
      const float s = sigmoid(g);
      const float dy = widen(grad.value[lane]);
      grad_up.value[lane] = narrow<T>(dy * g * s);
      // d silu(g) / dg = σ(g) · (1 + g · (1 − σ(g)))
      grad_gate.value[lane] = narrow<T>(dy * widen(up.value[lane]) * s * (1.0f + g * (1.0f - s)));
    }
    *reinterpret_cast<Pack<T, lanes>*>(grad_gate_and_up + input_at) = grad_gate;
    *reinterpret_cast<Pack<T, lanes>*>(grad_gate_and_up + input_at + shape.width) = grad_up;
  }
}

template <typename T>
std::int64_t packs(const SwigluShape& shape) {
  return shape.rows * (shape.width / static_cast<std::int64_t>(16 / sizeof(T)));
}

template <typename T>
cudaError_t forward_as(const SwigluShape& shape, const void* gate_and_up, void* output, cudaStream_t stream) {
  forward_kernel<T><<<grid_blocks(packs<T>(shape)), threads_per_block, 0, stream>>>(
      shape, static_cast<const T*>(gate_and_up), static_cast<T*>(output));
  return cudaGetLastError();
}

template <typename T>
cudaError_t backward_as(const SwigluShape& shape, const void* gate_and_up, const void* grad_output,
                        void* grad_gate_and_up, cudaStream_t stream) {
  backward_kernel<T><<<grid_blocks(packs<T>(shape)), threads_per_block, 0, stream>>>(
      shape, static_cast<const T*>(gate_and_up), static_cast<const T*>(grad_output),
      static_cast<T*>(grad_gate_and_up));
  return cudaGetLastError();
}

}  // namespace

cudaError_t swiglu_forward(ElementType type, const SwigluShape& shape, const void* gate_and_up, void* output,
                           cudaStream_t stream) {
  switch (type) {
    case ElementType::float32: return forward_as<float>(shape, gate_and_up, output, stream);
    case ElementType::float16: return forward_as<__half>(shape, gate_and_up, output, stream);
    case ElementType::bfloat16: return forward_as<__nv_bfloat16>(shape, gate_and_up, output, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t swiglu_backward(ElementType type, const SwigluShape& shape, const void* gate_and_up,
                            const void* grad_output, void* grad_gate_and_up, cudaStream_t stream) {
  switch (type) {
    case ElementType::float32:
      return backward_as<float>(shape, gate_and_up, grad_output, grad_gate_and_up, stream);
    case ElementType::float16:
      return backward_as<__half>(shape, gate_and_up, grad_output, grad_gate_and_up, stream);
    case ElementType::bfloat16:
      return backward_as<__nv_bfloat16>(shape, gate_and_up, grad_output, grad_gate_and_up, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace dvfslab::torch_backend::kernels
