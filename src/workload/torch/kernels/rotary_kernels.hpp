#pragma once
// The rotary position embedding of Llama-style attention (the rotate-half form) as
// one CUDA kernel of dvfslab's own. ATen applies it to the strided query and key
// views of the joined projection as a multiply, a roll and a multiply-add each
// forward, and as several kernels backward, unvectorised on strided input: in the
// Llama 125m bf16 training profile on the H200 `roll` alone took 0.87 ms a step and
// strided broadcasting multiplies 2.2 ms (docs/workloads.md). Here it is one read
// and one write of each tensor each way.
// No LibTorch types: nvcc compiles this alone.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "element_type.hpp"

namespace dvfslab::torch_backend::kernels {

// [batch, tokens, heads, head_dim], head_dim innermost.
struct RotaryShape {
  std::int64_t batch = 0, tokens = 0, heads = 0, head_dim = 0;
};

// Element strides of the outer dimensions; head_dim's is 1.
struct RotaryStrides {
  std::int64_t batch = 0, token = 0, head = 0;
};

// With h = head_dim / 2, the features d and d + h of each head are rotated as a pair:
//   out[d]     = cos[d]     · x[d]     + signed_sin[d]     · x[d + h]
//   out[d + h] = cos[d + h] · x[d + h] + signed_sin[d + h] · x[d]
// where the tables give, per token, the cosine of each feature's angle and its sine
// signed for the half it is added to (−sin on the first half, +sin on the second).
struct RotaryArgs {
  const void* input = nullptr;
  RotaryStrides input_strides;
  void* output = nullptr;
  RotaryStrides output_strides;
  const float* cos = nullptr;         // [tokens, head_dim], rows head_dim apart
  const float* signed_sin = nullptr;  // the same shape
  // The transposed rotation (the two sines of a pair swapped), which carries the
  // output's gradient back to the input's.
  bool transpose = false;
};

// The caller passes head_dim / 2 and every stride as multiples of 16 bytes' worth
// of elements, and 16-byte aligned input and output; input and output must not overlap.
cudaError_t rotary_embedding(ElementType type, const RotaryShape& shape, const RotaryArgs& args,
                             cudaStream_t stream);

}  // namespace dvfslab::torch_backend::kernels
