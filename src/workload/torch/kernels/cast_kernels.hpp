#pragma once
// Element-type conversion as a kernel of dvfslab's own. ATen converts a 16-bit
// tensor to FP32 in its generic casting loop, one element per load and store: in
// GPT-2 small's bf16 training step on an H100 that loop took about 1.06 ms for the
// 122 gradients of its weights, biases and normalised activations, this kernel
// 0.63 ms (docs/results/h100/lm_loss_and_casts). It moves as many elements per load
// and store as 16 bytes of the wider type hold. (FP32 to 16 bits ATen already
// vectorises; there the two take the same time.) No LibTorch
// types: nvcc compiles this alone.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "element_type.hpp"

namespace dvfslab::torch_backend::kernels {

// output[i] = input[i] converted, rounding to nearest even, for i < count.
// Both pointers 16-byte aligned, the tensors dense; any count.
cudaError_t cast_elements(ElementType from, ElementType to, std::int64_t count, const void* input,
                          void* output, cudaStream_t stream);

}  // namespace dvfslab::torch_backend::kernels
