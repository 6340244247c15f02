#pragma once
// A workload of fixed simulated kernels on the simulated GPU, independent of the
// simulated CNN profiles, so runner tests pin the runner and not the profiles. Its
// energy varies with batch and clock, so the confidence-interval stop rule asks for
// different repetitions at different points; it stays under the power limit, so no
// clock is power-capped.
#include <cstdint>
#include <memory>
#include <utility>

#include "dvfslab/error.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/workload.hpp"

namespace dvfslab::testing {

class KernelWorkload final : public Workload {
 public:
  // `calls_left`, when given, counts down the run_iterations calls left before one
  // throws (a workload that fails part-way).
  KernelWorkload(Case workload_case, SimGpu& gpu, int* calls_left)
      : case_(std::move(workload_case)), gpu_(gpu), calls_left_(calls_left) {}
  const Case& workload_case() const override { return case_; }
  std::string item_unit() const override { return "images"; }
  double items_per_iteration() const override { return case_.batch; }
  void run_iterations(std::int64_t count) override {
    if (calls_left_ != nullptr && (*calls_left_)-- <= 0) throw Error("the test workload stops here");
    SimKernel kernel;
    kernel.fixed_s = 0.002;
    kernel.scalable_s = 0.0005 * case_.batch;
    kernel.compute_fraction = 0.8;
    kernel.core_activity = 0.6;
    kernel.memory_activity = 0.6;
    gpu_.run(kernel, static_cast<double>(count));
  }

 private:
  Case case_;
  SimGpu& gpu_;
  int* calls_left_;
};

// A registry of the one workload "kernel", on simulated GPUs only.
inline WorkloadRegistry kernel_registry(int* calls_left = nullptr) {
  WorkloadRegistry registry;
  registry.add(
      WorkloadInfo{"kernel", "images", 32, "fixed simulated kernels"},
      [](const Gpu& gpu) { return gpu.identity().simulated; },
      [calls_left](const Case& c, Gpu& gpu, const WorkloadOptions&) -> std::unique_ptr<Workload> {
        return std::make_unique<KernelWorkload>(c, dynamic_cast<SimGpu&>(gpu), calls_left);
      });
  return registry;
}

}  // namespace dvfslab::testing
