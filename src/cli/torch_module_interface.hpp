#pragma once
// What the dvfslab executable and its LibTorch module (dvfslab-run-workload.so)
// hand each other. LibTorch lives in that module, loaded only by the commands that
// run its models, because linked into the executable its start-up (registering
// thousands of operators: ~0.8 s of CPU on a 2-core machine) delayed every command.
#include <cstdint>
#include <optional>
#include <string>

#include "dvfslab/workload.hpp"

namespace dvfslab::cli {

struct RunWorkloadArgs {
  std::string name;
  bool list = false;
  int batch = 0;
  std::string mode = "train";
  std::string precision = "fp32";
  std::int64_t iterations = 20;
  std::int64_t warmup = 5;
  std::int64_t mark_every = 1;
  WorkloadOptions options;
  std::string preset;
  int prompt_length = 0;
  int generated_length = 0;
  bool no_channels_last = false;
  bool no_cuda_graph = false;
  bool no_cudnn_benchmark = false;
  bool no_fusion = false;
  bool json = false;
  std::optional<std::string> kernel_profile;  // path of the profile's JSON
  std::int64_t profile_iterations = 5;
};

// The module's C symbols. Both sides are built together from one source tree, so
// C++ types and exceptions pass between them.
// Runs `dvfslab run-workload`; throws dvfslab::Error (one line) on failure.
inline constexpr const char* run_workload_entry_point = "dvfslab_run_workload";
using RunWorkloadEntryPoint = void (*)(const RunWorkloadArgs&);
// Registers the LibTorch models for hardware GPUs (add_torch_workloads).
inline constexpr const char* add_workloads_entry_point = "dvfslab_add_torch_workloads";
// The build the module is from (DVFSLAB_MODULE_BUILD: the version and a hash of the
// headers whose types pass between the two), checked before any other call.
inline constexpr const char* module_build_entry_point = "dvfslab_module_build";
using ModuleBuildEntryPoint = const char* (*)();

}  // namespace dvfslab::cli
