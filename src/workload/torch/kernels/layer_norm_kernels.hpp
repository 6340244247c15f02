#pragma once
// Layer normalisation whose output feeds a matrix product in another element type,
// as CUDA kernels of dvfslab's own. Under autocast, ATen normalises GPT-2's FP32
// residual stream into an FP32 tensor that the product's cast reads again, and its
// backward widens the 16-bit gradient to FP32 before its own pass and sums the
// gains' and biases' gradients in a further kernel (on an H100, GPT-2 small's bf16
// training step: 0.68 ms forward, 0.72 + 1.14 ms backward, the casts besides).
// Here the forward writes the product's type directly, and the backward reads the
// gradient in that type and sums the gains' and biases' gradients in two stages
// with a fixed order. A residual add before the norm (GPT-2's every norm but the
// first) runs in the same passes: forward the FP32 stream plus a 16-bit branch,
// backward the stream's gradient added to the norm's and written in both types.
// No LibTorch types: nvcc compiles this alone.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "element_type.hpp"

namespace dvfslab::torch_backend::kernels {

// `rows` rows normalised over their `width` elements.
struct LayerNormShape {
  std::int64_t rows = 0, width = 0;
};

// y = (x − mean) · inverse_std · gain + bias, with the mean and the biased
// variance of each row and inverse_std = 1 / sqrt(variance + epsilon). With a
// branch, x = input + branch (a residual add) is normalised and stored as `sum`.
struct LayerNormForward {
  const void* input = nullptr;   // rows × width, the input type
  const void* branch = nullptr;  // rows × width, the output type; may be null
  void* sum = nullptr;           // rows × width, the input type; needed with a branch
  const void* gain = nullptr;    // width, the input type
  const void* bias = nullptr;    // width, the input type
  void* output = nullptr;        // rows × width, the output type
  float* mean = nullptr;         // rows, kept for the backward
  float* inverse_std = nullptr;  // rows, kept for the backward
  float epsilon = 1e-5f;
};

cudaError_t layer_norm_forward(ElementType input_type, ElementType output_type, const LayerNormShape& shape,
                               const LayerNormForward& args, cudaStream_t stream);

// FP32 scratch the backward needs between its passes, in elements.
std::int64_t layer_norm_backward_scratch(const LayerNormShape& shape);

// The input's gradient is the layer norm's plus `grad_sum`, the gradient that
// reaches the normalised tensor by other paths (the residual stream's).
struct LayerNormBackward {
  const void* grad_output = nullptr;  // rows × width, the output type
  const void* grad_sum = nullptr;     // rows × width, the input type; may be null
  const void* input = nullptr;        // the tensor normalised: the forward's input, or its sum
  const void* gain = nullptr;
  const float* mean = nullptr;
  const float* inverse_std = nullptr;
  void* grad_input = nullptr;   // rows × width, the input type
  void* grad_branch = nullptr;  // the same values in the output type; may be null
  void* grad_gain = nullptr;    // width, the input type
  void* grad_bias = nullptr;    // width, the input type
  float* scratch = nullptr;     // layer_norm_backward_scratch(shape) elements
};

cudaError_t layer_norm_backward(ElementType input_type, ElementType output_type, const LayerNormShape& shape,
                                const LayerNormBackward& args, cudaStream_t stream);

// Every tensor dense and 16-byte aligned; width a multiple of 4; rows ≥ 1.

}  // namespace dvfslab::torch_backend::kernels
