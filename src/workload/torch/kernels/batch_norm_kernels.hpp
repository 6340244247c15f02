#pragma once
// Training batch norm with its ReLU (and a residual added before the ReLU) over
// channels-last 16-bit activations, as CUDA kernels of dvfslab's own. ATen runs a
// training batch norm + ReLU as four passes forward and four backward, with its
// channels-last statistics kernels well below the GPU's bandwidth: 45 % of
// ResNet-50's bf16 training step on the H200 (docs/workloads.md). Here forward is
// one read for the statistics and one read and write for the output; backward one
// read for the sums and one for the gradients. The ReLU's mask travels as one bit
// per element, written by the forward, so the backward reads 1/16 of the output
// instead of all of it twice. Every reduction is two-stage with a fixed order, so
// results do not depend on scheduling. No LibTorch types: nvcc compiles this alone.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace dvfslab::torch_backend::kernels {

enum class HalfType { float16, bfloat16 };

// rows × channels activations (rows = batch × height × width), channels innermost;
// channels a multiple of 8 and every 16-bit tensor 16-byte aligned.
struct NormShape {
  std::int64_t rows = 0;
  std::int64_t channels = 0;
};

// Bytes of the ReLU's mask: one bit per element, one byte per 8 channels of a row.
std::int64_t relu_mask_bytes(const NormShape& shape);

// Per-channel float scratch the kernels need between passes: NormWorkspace::floats
// of them.
struct NormWorkspace {
  static std::int64_t floats(const NormShape& shape);
};

struct NormForward {
  const void* input = nullptr;
  const void* residual = nullptr;  // added before the ReLU; may be null
  const float* weight = nullptr;   // γ
  const float* bias = nullptr;     // β
  float* running_mean = nullptr;   // updated with `momentum`, as PyTorch does
  float* running_var = nullptr;    // (unbiased variance)
  float* saved_mean = nullptr;     // per channel, for the backward
  float* saved_inverse_std = nullptr;
  void* output = nullptr;
  std::uint8_t* relu_mask =
      nullptr;  // written where relu is set: bit c % 8 of byte (row·C + c) / 8 is output > 0
  float* workspace = nullptr;
  double momentum = 0.1;
  double eps = 1e-5;
  bool relu = true;
};

cudaError_t batch_norm_act_forward(HalfType type, const NormShape& shape, const NormForward& args,
                                   cudaStream_t stream);

struct NormBackward {
  const void* grad_output = nullptr;
  const void* input = nullptr;
  const std::uint8_t* relu_mask = nullptr;  // the forward's; null when it had no ReLU
  const float* weight = nullptr;
  const float* saved_mean = nullptr;
  const float* saved_inverse_std = nullptr;
  void* grad_input = nullptr;
  void* grad_residual = nullptr;  // the masked gradient, when the forward added a residual; may be null
  float* grad_weight = nullptr;
  float* grad_bias = nullptr;
  float* workspace = nullptr;
};

cudaError_t batch_norm_act_backward(HalfType type, const NormShape& shape, const NormBackward& args,
                                    cudaStream_t stream);

}  // namespace dvfslab::torch_backend::kernels
