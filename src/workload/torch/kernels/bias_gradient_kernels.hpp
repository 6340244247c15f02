#pragma once
// A linear layer's bias gradient, the sum of the output's gradient over its rows,
// as a kernel of dvfslab's own that writes the bias's type directly. ATen sums a
// 16-bit gradient in its generic reduction and autocast then widens the sum to the
// FP32 bias in another kernel: in GPT-2 small's bf16 training step on an H100 the
// 48 sums took 1.14 ms. No LibTorch types: nvcc compiles this alone.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "element_type.hpp"

namespace dvfslab::torch_backend::kernels {

// FP32 scratch bias_gradient needs, in elements.
std::int64_t bias_gradient_scratch(std::int64_t rows, std::int64_t width);

// grad_bias[j] = Σ_i grad_output[i][j] over `rows` rows of `width`, summed in FP32
// in a fixed order. Both tensors dense and 16-byte aligned, width a multiple of 4.
cudaError_t bias_gradient(ElementType gradient_type, ElementType bias_type, std::int64_t rows,
                          std::int64_t width, const void* grad_output, void* grad_bias, float* scratch,
                          cudaStream_t stream);

}  // namespace dvfslab::torch_backend::kernels
