#include "workload/torch/torch_compat.hpp"

#include <ATen/autocast_mode.h>
#include <torch/cuda.h>

#include <cmath>
#include <limits>

#include "dvfslab/error.hpp"
#include "workload/torch/torch_version.hpp"

// CMake defines DVFSLAB_TORCH_CUDA when the LibTorch found was built with CUDA;
// Debian's package ships the CUDA headers of ATen but no CUDA runtime to use them.
#if defined(DVFSLAB_TORCH_CUDA) && __has_include(<ATen/cuda/CUDAGraph.h>) && __has_include(<cuda_runtime_api.h>)
#define DVFSLAB_CUDA_GRAPHS 1
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#else
#define DVFSLAB_CUDA_GRAPHS 0
#endif

// LibTorch 2.4 made autocast state per device type; 1.x had one function per backend.
#define DVFSLAB_DEVICE_TYPED_AUTOCAST DVFSLAB_TORCH_AT_LEAST(2, 4)

// scaled_dot_product_attention's enable_gqa came with LibTorch 2.5, rms_norm with 2.4.
#define DVFSLAB_GROUPED_QUERY_ATTENTION DVFSLAB_TORCH_AT_LEAST(2, 5)
#define DVFSLAB_FUSED_RMS_NORM DVFSLAB_TORCH_AT_LEAST(2, 4)

namespace dvfslab::torch_backend {

bool cuda_usable() {
#if defined(DVFSLAB_TORCH_CUDA)
  return torch::cuda::is_available();
#else
  return false;
#endif
}

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

void set_tf32(bool allowed) {
  at::globalContext().setAllowTF32CuBLAS(allowed);
  at::globalContext().setAllowTF32CuDNN(allowed);
}

void set_cudnn_benchmark(bool enabled) { at::globalContext().setBenchmarkCuDNN(enabled); }

namespace {

#if DVFSLAB_DEVICE_TYPED_AUTOCAST
bool autocast_enabled(torch::DeviceType type) { return at::autocast::is_autocast_enabled(type); }
void set_autocast_enabled(torch::DeviceType type, bool on) { at::autocast::set_autocast_enabled(type, on); }
torch::ScalarType autocast_dtype(torch::DeviceType type) { return at::autocast::get_autocast_dtype(type); }
void set_autocast_dtype(torch::DeviceType type, torch::ScalarType dtype) {
  at::autocast::set_autocast_dtype(type, dtype);
}
#else
bool autocast_enabled(torch::DeviceType type) {
  return type == torch::kCUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
void set_autocast_enabled(torch::DeviceType type, bool on) {
  if (type == torch::kCUDA) {
    at::autocast::set_enabled(on);
  } else {
    at::autocast::set_cpu_enabled(on);
  }
}
torch::ScalarType autocast_dtype(torch::DeviceType type) {
  return type == torch::kCUDA ? at::autocast::get_autocast_gpu_dtype()
                              : at::autocast::get_autocast_cpu_dtype();
}
void set_autocast_dtype(torch::DeviceType type, torch::ScalarType dtype) {
  if (type == torch::kCUDA) {
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
}
#endif

}  // namespace

std::optional<torch::ScalarType> active_autocast_dtype(torch::DeviceType device_type) {
  if (!autocast_enabled(device_type)) return std::nullopt;
  return autocast_dtype(device_type);
}

AutocastScope::AutocastScope(torch::DeviceType device_type, torch::ScalarType dtype)
    : device_type_(device_type),
      was_enabled_(autocast_enabled(device_type)),
      previous_dtype_(autocast_dtype(device_type)),
      previous_cache_(at::autocast::is_autocast_cache_enabled()) {
  at::autocast::set_autocast_cache_enabled(false);
  set_autocast_dtype(device_type, dtype);
  set_autocast_enabled(device_type, true);
}

AutocastScope::~AutocastScope() {
  set_autocast_enabled(device_type_, was_enabled_);
  set_autocast_dtype(device_type_, previous_dtype_);
  at::autocast::set_autocast_cache_enabled(previous_cache_);
}

torch::Tensor attention(const torch::Tensor& query, const torch::Tensor& shared_key,
                        const torch::Tensor& shared_value, bool causal, double dropout) {
  const auto groups = query.size(1) / shared_key.size(1);
#if DVFSLAB_GROUPED_QUERY_ATTENTION
  return at::scaled_dot_product_attention(query, shared_key, shared_value, {}, dropout, causal, std::nullopt,
                                          /*enable_gqa=*/groups > 1);
#else
  const auto key = groups == 1 ? shared_key : shared_key.repeat_interleave(groups, /*dim=*/1);
  const auto value = groups == 1 ? shared_value : shared_value.repeat_interleave(groups, /*dim=*/1);
#if DVFSLAB_TORCH_AT_LEAST(2, 0)
  return at::scaled_dot_product_attention(query, key, value, {}, dropout, causal);
#else
  auto scores = torch::matmul(query, key.transpose(-2, -1)) / std::sqrt(static_cast<double>(query.size(-1)));
  if (causal) {
    const auto tokens = query.size(-2);
    auto future = torch::ones({tokens, tokens}, query.options().dtype(torch::kBool)).triu(1);
    scores = scores.masked_fill(future, -std::numeric_limits<double>::infinity());
  }
  auto weights = torch::softmax(scores, -1);
  if (dropout > 0.0) weights = torch::dropout(weights, dropout, /*train=*/true);
  return torch::matmul(weights.to(value.scalar_type()), value);
#endif
#endif
}

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& gain, double epsilon) {
#if DVFSLAB_FUSED_RMS_NORM
  if (x.scalar_type() == gain.scalar_type()) return at::rms_norm(x, {x.size(-1)}, gain, epsilon);
#endif
  const auto wide = x.to(torch::kFloat);
  const auto normalised = wide * torch::rsqrt(wide.pow(2).mean(-1, /*keepdim=*/true) + epsilon);
  return normalised.to(x.scalar_type()) * gain;
}

torch::Tensor linear_tanh_gelu(const torch::Tensor& input, const torch::Tensor& weight, const torch::Tensor& bias) {
#if DVFSLAB_TORCH_AT_LEAST(2, 0)
  if (input.is_cuda() && !torch::GradMode::is_enabled()) {
    auto sizes = input.sizes().vec();
    sizes.back() = weight.size(0);
    const auto rows = input.reshape({-1, input.size(-1)}).to(weight.scalar_type());
    return at::_addmm_activation(bias.to(weight.scalar_type()), rows, weight.t(), 1, 1, /*use_gelu=*/true)
        .view(sizes);
  }
#endif
  return torch::gelu(torch::linear(input, weight, bias), "tanh");
}

#if DVFSLAB_CUDA_GRAPHS

struct StepGraph::Impl {
  at::cuda::CUDAGraph graph;
};

bool StepGraph::supported() { return cuda_usable(); }

StepGraph::StepGraph() : impl_(std::make_unique<Impl>()) {}
StepGraph::~StepGraph() = default;

void StepGraph::capture(const std::function<void()>& step, int warmup_steps) {
  torch::cuda::synchronize();
  // Capture is illegal on the legacy default stream, and warming up on the
  // capture stream makes the allocator's pools and cuDNN plans match it.
  auto side_stream = at::cuda::getStreamFromPool();
  {
    c10::cuda::CUDAStreamGuard guard(side_stream);
    for (int i = 0; i < warmup_steps; ++i) step();
    side_stream.synchronize();
    impl_->graph.capture_begin();
    try {
      step();
    } catch (...) {
      // End the capture so the stream is usable again; its own error is secondary.
      try {
        impl_->graph.capture_end();
      } catch (...) {
      }
      throw;
    }
    impl_->graph.capture_end();
  }
  torch::cuda::synchronize();
}

void StepGraph::replay() { impl_->graph.replay(); }

#else

struct StepGraph::Impl {};

bool StepGraph::supported() { return false; }

StepGraph::StepGraph() = default;
StepGraph::~StepGraph() = default;

void StepGraph::capture(const std::function<void()>&, int) {
  throw NotSupportedError("CUDA graphs need a CUDA build of LibTorch; run with --no-cuda-graph");
}

void StepGraph::replay() {
  throw NotSupportedError("CUDA graphs need a CUDA build of LibTorch; run with --no-cuda-graph");
}

#endif

}  // namespace dvfslab::torch_backend
