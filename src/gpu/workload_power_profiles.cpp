#include "dvfslab/workload_power_profiles.hpp"

#include <fmt/format.h>

#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

// The GPU's profile control; NotSupportedError (one line) for a backend without one.
WorkloadPowerProfileControl& control_of(Gpu& gpu, std::string_view action) {
  if (gpu.read_only()) {
    throw PermissionError(
        fmt::format("refused to {}: DVFSLAB_READ_ONLY=1 forbids every GPU setting change "
                    "(unset it to allow control calls)",
                    action));
  }
  auto* control = dynamic_cast<WorkloadPowerProfileControl*>(&gpu);
  if (control == nullptr) {
    throw NotSupportedError(fmt::format("cannot {}: GPU {} ({}, backend {}) has no workload power profiles",
                                        action, gpu.identity().index, gpu.identity().name,
                                        gpu.identity().backend));
  }
  return *control;
}

}  // namespace

std::optional<WorkloadPowerProfiles> workload_power_profiles(Gpu& gpu) {
  auto* control = dynamic_cast<WorkloadPowerProfileControl*>(&gpu);
  return control ? control->read_workload_power_profiles() : std::nullopt;
}

void request_workload_power_profiles(Gpu& gpu, const std::vector<int>& ids) {
  control_of(gpu, "request workload power profiles").add_requested_workload_power_profiles(ids);
}

void clear_workload_power_profiles(Gpu& gpu, const std::vector<int>& ids) {
  control_of(gpu, "clear requested workload power profiles").remove_requested_workload_power_profiles(ids);
}

}  // namespace dvfslab
