#pragma once
// Max pooling over channels-last (NHWC) activations, as CUDA kernels of dvfslab's
// own. ATen's channels-last kernel writes an int64 index for every output element,
// which on a stride-1 pool is four times the bytes of a bf16 output: on the H200
// that made pooling half of GoogLeNet's inference step (docs/workloads.md). These
// kernels write no index at inference, and a one-byte window position in training.
// The interface has no LibTorch types so that it compiles with nvcc alone.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "element_type.hpp"

namespace dvfslab::torch_backend::kernels {

// Sizes of one pool: input n × h × w × c (channels innermost, densely packed), output
// n × out_h × out_w × c; a window of kernel_h × kernel_w at stride, with implicit
// padding that never wins.
struct PoolShape {
  std::int64_t n = 0, h = 0, w = 0, c = 0, out_h = 0, out_w = 0;
  int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
};

// The largest window a one-byte position can name.
inline constexpr int most_window_positions = 256;

// output = the maximum of each window (NaN wins, the first maximum on ties, as ATen).
// With `argmax`, also the winner's position in its window (row × kernel_w + column,
// counted from the padded window's corner), one byte per output element. `vector`
// lets a thread move 16 bytes of channels at a time: the caller passes it only when
// c is a multiple of 16 / element size and both pointers are 16-byte aligned.
cudaError_t max_pool_forward(ElementType type, const PoolShape& shape, const void* input, void* output,
                             std::uint8_t* argmax, bool vector, cudaStream_t stream);

// grad_input = the sum of grad_output over the windows whose argmax is this element
// (zero elsewhere); written whole, no atomics, so it is deterministic.
cudaError_t max_pool_backward(ElementType type, const PoolShape& shape, const void* grad_output,
                              const std::uint8_t* argmax, void* grad_input, bool vector, cudaStream_t stream);

}  // namespace dvfslab::torch_backend::kernels
