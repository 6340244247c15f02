#pragma once
// A unit of repeatable GPU work whose iterations the meter times: a built-in
// LibTorch model, a simulated profile on a SimGpu, or an external command.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab {

struct WorkloadOptions {
  int image_size = 0;       // 0 = the model's default
  int sequence_length = 0;  // 0 = the model's default
  bool channels_last = true;
  bool cudnn_benchmark = true;
  bool cuda_graph = true;    // capture the step when shapes are static
  bool fused_layers = true;  // CNNs: fused convolution kernels, batch norm folded for inference
  std::uint64_t seed = 1234;
  std::string torch_device;  // "" = cuda when available, else cpu
};

// Iterations that completed in some span of time, with the items they processed.
struct CompletedWork {
  std::int64_t iterations = 0;
  double items = 0;
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual const Case& workload_case() const = 0;
  virtual std::string item_unit() const = 0;  // "images", "tokens", "items"
  virtual double items_per_iteration() const = 0;
  // Allocation, compilation, graph capture: done once, never measured.
  virtual void prepare() {}
  // Runs `count` iterations and returns once the device has finished them.
  virtual void run_iterations(std::int64_t count) = 0;

  // A workload that runs by itself (an external program) does not pause between
  // the runner's calls: the runner then times its windows on the GPU's clock and
  // counts what completed inside them, with the two calls below.
  virtual bool runs_by_itself() const { return false; }
  // Follows its progress until `until_s` on the GPU's clock.
  virtual void follow_until(double until_s) { (void)until_s; }
  // The iterations that completed in (from_s, to_s], as time-stamped on arrival;
  // spans asked for must not go back before an earlier from_s.
  virtual CompletedWork completed_between(double from_s, double to_s) {
    (void)from_s;
    (void)to_s;
    return {};
  }
};

struct WorkloadInfo {
  std::string name;
  std::string item_unit;
  int default_batch = 1;
  std::string description;
};

// Builds workloads by name. Backends add themselves (the CLI registers the LibTorch
// ones when built with them), so the core does not depend on LibTorch.
class WorkloadRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Workload>(const Case&, Gpu&, const WorkloadOptions&)>;
  // `applies` says whether this backend serves the given GPU (e.g. only SimGpu).
  using Applies = std::function<bool(const Gpu&)>;

  void add(WorkloadInfo info, Applies applies, Factory factory);
  std::vector<WorkloadInfo> list(const Gpu* gpu = nullptr) const;
  // Throws ConfigError listing the names available for `gpu`.
  std::unique_ptr<Workload> create(const Case& workload_case, Gpu& gpu, const WorkloadOptions& options) const;

 private:
  struct Entry {
    WorkloadInfo info;
    Applies applies;
    Factory factory;
  };
  std::vector<Entry> entries_;
};

}  // namespace dvfslab
