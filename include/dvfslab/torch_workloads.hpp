#pragma once
// The built-in deep-learning workloads (LibTorch): AlexNet, VGG-16, GoogLeNet,
// ResNet-50, BERT-base, GPT-2 small and a Llama-style decoder, in training or inference, on CUDA or the
// CPU. Only built when dvfslab is configured with LibTorch (DVFSLAB_HAVE_TORCH).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dvfslab/workload.hpp"

namespace dvfslab {

// How a LibTorch workload ended up running, for logs and JSON output.
struct TorchRunInfo {
  std::string device;                // "cuda:0", "cpu"
  bool cuda_graph = false;           // the step is replayed from a captured graph
  int fused_layers = 0;              // CNN convolution units running fused kernels
  int own_kernel_pools = 0;          // CNN max pools running dvfslab's own CUDA kernels
  int image_size = 0;                // CNNs; 0 for the transformers
  int sequence_length = 0;           // transformers; 0 for the CNNs
  std::string preset;                // size preset (llama); "" for models without presets
  std::vector<std::string> notices;  // options that could not be honoured, and why
};

class TorchWorkload : public Workload {
 public:
  virtual TorchRunInfo run_info() const = 0;
  // Loss of the latest training step (waits for the device); throws in infer mode.
  virtual double last_loss() = 0;
};

// Where a workload's iterations spend their time, by LibTorch's profiler: on a GPU
// the kernels (and copies) it ran, which do not nest, so their times add up to the
// device's busy time; on the CPU the ATen operators with their self time (nested
// operators' time taken out). One entry per distinct name, most time first.
struct KernelTime {
  std::string name;
  std::int64_t calls = 0;
  double total_ms = 0;
};
struct KernelProfile {
  bool gpu_kernels = false;  // false: CPU operators
  std::int64_t iterations = 0;
  std::vector<KernelTime> entries;
};
// Runs `iterations` more iterations of `workload` (prepared, as after a timed run)
// under the profiler. Throws NotSupportedError when the profiler recorded none of
// what it was asked for (a LibTorch built without CUPTI sees no GPU kernels).
KernelProfile profile_kernels(TorchWorkload& workload, std::int64_t iterations);

// name, default batch, unit ("images" or "tokens") and a description of each.
std::vector<WorkloadInfo> torch_workload_infos();

// Builds one workload without a Gpu object: the device comes from
// options.torch_device; `preset` picks the size of a model that has presets
// (llama: tiny, 125m, 1b, 7b; "" = its default). Throws ConfigError (unknown name
// or bad option, listing the choices) or NotSupportedError (e.g. CUDA asked for in
// a CPU-only build).
std::unique_ptr<TorchWorkload> create_torch_workload(const Case& workload_case,
                                                     const WorkloadOptions& options,
                                                     const std::string& preset = "");

// Text generation by a decoder (llama): a batch of prompts is prefilled into a KV
// cache, then tokens are decoded greedily one per step. The two phases are run and
// timed apart, since their best clocks differ (prefill is compute-bound, decode
// memory-bound).
class TorchGenerator {
 public:
  virtual ~TorchGenerator() = default;
  virtual TorchRunInfo run_info() const = 0;
  virtual std::int64_t prefill_tokens() const = 0;  // batch × prompt length
  virtual std::int64_t decode_tokens() const = 0;   // batch × generated length
  // Fills the cache from the prompts and picks each sequence's next token.
  virtual void prefill() = 0;
  // From the latest prefill's cache, decodes the generated length token by token.
  virtual void decode() = 0;
  // Waits for the device to finish the work queued so far.
  virtual void synchronize() = 0;
};

// Throws ConfigError when `workload_case.workload` cannot generate (only llama
// can), for a bad length or option, or when prompt plus generated length exceed
// the preset's positions. `workload_case.mode` is ignored.
std::unique_ptr<TorchGenerator> create_torch_generator(const Case& workload_case,
                                                       const WorkloadOptions& options,
                                                       const std::string& preset, int prompt_length,
                                                       int generated_length);

// Runs `body`; an error LibTorch throws becomes a dvfslab::Error of one line (its
// message without LibTorch's C++ backtrace), and a failed allocation, CPU or GPU,
// says to ask for a smaller batch.
void explain_torch_errors(const std::function<void()>& body);

// Registers every LibTorch workload for real GPUs (identity().simulated == false).
void add_torch_workloads(WorkloadRegistry& registry);

}  // namespace dvfslab
