#pragma once
// The built-in deep-learning workloads (LibTorch): AlexNet, VGG-16, GoogLeNet,
// ResNet-50, BERT-base and GPT-2 small, in training or inference, on CUDA or the
// CPU. Only built when dvfslab is configured with LibTorch (DVFSLAB_HAVE_TORCH).
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
  int image_size = 0;                // CNNs; 0 for the transformers
  int sequence_length = 0;           // transformers; 0 for the CNNs
  std::vector<std::string> notices;  // options that could not be honoured, and why
};

class TorchWorkload : public Workload {
 public:
  virtual TorchRunInfo run_info() const = 0;
  // Loss of the latest training step (waits for the device); throws in infer mode.
  virtual double last_loss() = 0;
};

// name, default batch, unit ("images" or "tokens") and a description of each.
std::vector<WorkloadInfo> torch_workload_infos();

// Builds one workload without a Gpu object: the device comes from
// options.torch_device. Throws ConfigError (unknown name or bad option, listing
// the choices) or NotSupportedError (e.g. CUDA asked for in a CPU-only build).
std::unique_ptr<TorchWorkload> create_torch_workload(const Case& workload_case,
                                                     const WorkloadOptions& options);

// Registers every LibTorch workload for real GPUs (identity().simulated == false).
void add_torch_workloads(WorkloadRegistry& registry);

}  // namespace dvfslab
