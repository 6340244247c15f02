#pragma once
// Everything that differs between the LibTorch versions dvfslab builds against
// (Debian's CPU-only 1.13 and the CUDA 2.x inside PyTorch) lives behind this
// header, so the model and workload files compile unchanged against both.
#include <torch/types.h>

#include <functional>
#include <memory>
#include <optional>

namespace dvfslab::torch_backend {

// True when this build can launch CUDA work and a CUDA device is present.
bool cuda_usable();
// Waits for all queued work on `device` (a no-op on the CPU).
void synchronize(const torch::Device& device);

// Matrix multiplications and convolutions in TF32 (on) or full FP32 (off).
void set_tf32(bool allowed);
void set_cudnn_benchmark(bool enabled);

// Autocast on `device_type` to `dtype` while alive; restores the previous state.
// The weight-cast cache is off so casts never outlive an optimizer step or a
// captured graph.
class AutocastScope {
 public:
  AutocastScope(torch::DeviceType device_type, torch::ScalarType dtype);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  torch::DeviceType device_type_;
  bool was_enabled_;
  torch::ScalarType previous_dtype_;
  bool previous_cache_;
};

// The dtype autocast computes in on `device_type`, when autocast is on there.
std::optional<torch::ScalarType> active_autocast_dtype(torch::DeviceType device_type);

// softmax(q kᵀ / √d) v over [batch, heads, tokens, head_dim]; a fused kernel
// where the LibTorch version has one. `key` and `value` may have fewer heads than
// `query` (grouped-query attention): each then serves that many consecutive query
// heads, read in place from LibTorch 2.5 on and copied per query head before it.
torch::Tensor attention(const torch::Tensor& query, const torch::Tensor& key, const torch::Tensor& value,
                        bool causal, double dropout);

// x / rms(x) · gain over the last dimension, the mean of squares taken in FP32.
// One fused kernel forward and backward where LibTorch has it (2.4 on) and x and
// gain share a dtype; elsewhere written out, rounding the normalised x to x's dtype
// before the gain as Llama's reference code does.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& gain, double epsilon);

// gelu_tanh(input · weightᵀ + bias) in the weight's dtype. On CUDA with gradients
// off, one cuBLASLt GEMM with the GELU in its epilogue (LibTorch 2.x); elsewhere
// the linear layer and the GELU as two kernels.
torch::Tensor linear_tanh_gelu(const torch::Tensor& input, const torch::Tensor& weight, const torch::Tensor& bias);

// A whole step captured once and replayed; only on CUDA builds.
class StepGraph {
 public:
  // Whether capture is possible in this build (CUDA LibTorch with a GPU).
  static bool supported();
  StepGraph();
  ~StepGraph();
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;

  // Runs `step` `warmup_steps` times on a side stream (so lazily created state,
  // cuDNN plans and allocator pools exist), then records one call of it.
  void capture(const std::function<void()>& step, int warmup_steps);
  void replay();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dvfslab::torch_backend
