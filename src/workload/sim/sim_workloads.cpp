#include "dvfslab/sim_workloads.hpp"

#include <cmath>

#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "workload/sim/profiles.hpp"

namespace dvfslab {
namespace {

const sim::ModeProfile& mode_profile(const sim::NetworkProfile& network, Mode mode) {
  if (mode == Mode::infer) return network.infer;
  if (!network.train) {
    throw ConfigError(fmt::format("the simulated workload {} has no training mode: it is inference only "
                                  "(give the mode infer)",
                                  network.name));
  }
  return *network.train;
}

// Speed-up of the compute-bound and the memory-bound parts at `precision`.
std::pair<double, double> precision_speedups(const SimGpuSpec& spec, Precision precision) {
  switch (precision) {
    case Precision::fp32: return {1.0, 1.0};
    case Precision::tf32: return {spec.tf32_speedup, 1.0};
    case Precision::bf16:
    case Precision::fp16: return {spec.half_precision_speedup, 2.0};  // half the bytes per value
  }
  return {1.0, 1.0};
}

class SimWorkload final : public Workload {
 public:
  SimWorkload(const Case& workload_case, SimGpu& gpu, const WorkloadOptions& options)
      : case_(workload_case),
        gpu_(gpu),
        unit_(sim::network_profile(workload_case.workload).item_unit),
        kernel_(sim_workload_kernel(workload_case, gpu.spec(), options)),
        items_(sim_workload_items_per_iteration(workload_case, options)) {}

  const Case& workload_case() const override { return case_; }
  std::string item_unit() const override { return unit_; }
  double items_per_iteration() const override { return items_; }
  void run_iterations(std::int64_t count) override { gpu_.run(kernel_, static_cast<double>(count)); }

 private:
  Case case_;
  SimGpu& gpu_;
  std::string unit_;
  SimKernel kernel_;
  double items_;
};

}  // namespace

std::vector<std::string> sim_workload_names() {
  std::vector<std::string> names;
  for (const auto& profile : sim::network_profiles()) names.push_back(profile.name);
  return names;
}

std::vector<std::string> calibrated_sim_workload_names() {
  std::vector<std::string> names;
  for (const auto& profile : sim::network_profiles()) {
    if (profile.calibrated) names.push_back(profile.name);
  }
  return names;
}

std::vector<int> sim_workload_study_batches(std::string_view workload, Mode mode) {
  return mode_profile(sim::network_profile(workload), mode).study_batches;
}

double sim_workload_items_per_iteration(const Case& workload_case, const WorkloadOptions& options) {
  const sim::NetworkProfile& network = sim::network_profile(workload_case.workload);
  if (network.default_sequence_length == 0) return workload_case.batch;
  const int sequence =
      options.sequence_length > 0 ? options.sequence_length : network.default_sequence_length;
  return static_cast<double>(workload_case.batch) * sequence;
}

SimKernel sim_workload_kernel(const Case& workload_case, const SimGpuSpec& spec,
                              const WorkloadOptions& options) {
  const sim::NetworkProfile& network = sim::network_profile(workload_case.workload);
  if (workload_case.batch < 1) {
    throw ConfigError(fmt::format("batch size {} for {}: give a positive batch size", workload_case.batch,
                                  workload_case.workload));
  }
  const sim::ModeProfile& profile = mode_profile(network, workload_case.mode);
  const double items = sim_workload_items_per_iteration(workload_case, options);
  const double batch = workload_case.batch;
  // A small batch leaves part of the GPU idle: it costs as if half_batch more
  // samples ran, and the busy units draw proportionally less.
  const double per_sample_items = items / batch;
  const double scalable_v100_s = profile.item_ms * 1e-3 * per_sample_items * (batch + profile.half_batch);
  const double utilisation = std::sqrt(batch / (batch + profile.half_batch));
  const auto [compute_speedup, memory_speedup] = precision_speedups(spec, workload_case.precision);
  const double compute_s =
      scalable_v100_s * profile.compute_fraction / (spec.compute_speed_vs_v100 * compute_speedup);
  const double memory_s =
      scalable_v100_s * (1.0 - profile.compute_fraction) / (spec.memory_speed_vs_v100 * memory_speedup);
  SimKernel kernel;
  kernel.fixed_s = profile.fixed_ms * 1e-3;
  kernel.scalable_s = compute_s + memory_s;
  kernel.compute_fraction = compute_s / kernel.scalable_s;
  kernel.core_activity = profile.core_activity * utilisation;
  kernel.memory_activity = profile.memory_activity * utilisation;
  return kernel;
}

void add_sim_workloads(WorkloadRegistry& registry) {
  for (const auto& profile : sim::network_profiles()) {
    const int default_batch = (profile.train ? *profile.train : profile.infer).study_batches.front();
    registry.add(
        WorkloadInfo{profile.name, profile.item_unit, default_batch, profile.description},
        [](const Gpu& gpu) { return dynamic_cast<const SimGpu*>(&gpu) != nullptr; },
        [](const Case& workload_case, Gpu& gpu, const WorkloadOptions& options) -> std::unique_ptr<Workload> {
          return std::make_unique<SimWorkload>(workload_case, dynamic_cast<SimGpu&>(gpu), options);
        });
  }
}

}  // namespace dvfslab
