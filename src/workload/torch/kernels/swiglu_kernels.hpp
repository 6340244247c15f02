#pragma once
// The SwiGLU of a Llama-style MLP, silu(gate) · up, as CUDA kernels of dvfslab's own
// that read the gate and up halves of the joined projection's output in place and
// write the gradient of both halves as one tensor. ATen runs it as a SiLU and a
// multiply on strided halves forward, and backward as several kernels plus the
// concatenation of the two halves' gradients. No LibTorch types: nvcc compiles this
// alone.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "element_type.hpp"

namespace dvfslab::torch_backend::kernels {

// `rows` rows of `width` outputs; each input row is [gate | up], 2 · width elements.
struct SwigluShape {
  std::int64_t rows = 0, width = 0;
};

// output[r][j] = silu(gate) · up, with gate = gate_and_up[r][j], up = gate_and_up[r][width + j].
cudaError_t swiglu_forward(ElementType type, const SwigluShape& shape, const void* gate_and_up, void* output,
                           cudaStream_t stream);

// The gradients of gate and up, [gate | up] per row as the input was, from the
// output's gradient.
cudaError_t swiglu_backward(ElementType type, const SwigluShape& shape, const void* gate_and_up,
                            const void* grad_output, void* grad_gate_and_up, cudaStream_t stream);

// All tensors dense, width a multiple of 16 bytes' worth of elements, every pointer
// 16-byte aligned.

}  // namespace dvfslab::torch_backend::kernels
