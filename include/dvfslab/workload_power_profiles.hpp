#pragma once
// NVIDIA's workload power profiles (NVML R570+): pretuned power settings a GPU may
// offer (Max-Q, compute, memory-bound, LLM inference or training, ...). A program
// requests any set of them; the driver enforces those that do not conflict.
// A backend that has them implements WorkloadPowerProfileControl beside Gpu; the
// free functions below are how the rest of dvfslab reaches them, so that Gpu and
// every other backend stay as they are.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/workload_profile_names.hpp"

namespace dvfslab {

// The name of the knob a GPU's control has when it can request profiles
// (GpuControl::knobs()).
inline constexpr const char* workload_profile_knob = "workload_profile";

struct WorkloadPowerProfile {
  int id = 0;        // the vendor's profile number (NVML's nvmlPowerProfileType_t)
  std::string name;  // dvfslab's spelling: "max-q", "memory-bound", "llm-training"
  int priority = 0;  // the driver's arbitration rank: the lower wins a conflict
  bool operator==(const WorkloadPowerProfile&) const = default;
};

// The profiles a GPU supports and which of them are requested and enforced now
// (ids, ascending).
struct WorkloadPowerProfiles {
  std::vector<WorkloadPowerProfile> supported;
  std::vector<int> requested;
  std::vector<int> enforced;
  bool operator==(const WorkloadPowerProfiles&) const = default;
};

// What a backend with workload power profiles implements beside Gpu (NvmlGpu).
class WorkloadPowerProfileControl {
 public:
  virtual ~WorkloadPowerProfileControl() = default;
  // nullopt where this GPU or its driver does not support them.
  virtual std::optional<WorkloadPowerProfiles> read_workload_power_profiles() = 0;
  // Add `ids` to the request / remove them from it. Read-only mode is checked
  // before these are called.
  virtual void add_requested_workload_power_profiles(const std::vector<int>& ids) = 0;
  virtual void remove_requested_workload_power_profiles(const std::vector<int>& ids) = 0;
};

// The GPU's profiles, or nullopt where its backend, driver or the GPU itself has none.
std::optional<WorkloadPowerProfiles> workload_power_profiles(Gpu& gpu);
// Adds `ids` to the GPU's requested profiles / removes them. PermissionError in
// read-only mode and NotSupportedError where the GPU has no profiles, both before
// any driver call.
void request_workload_power_profiles(Gpu& gpu, const std::vector<int>& ids);
void clear_workload_power_profiles(Gpu& gpu, const std::vector<int>& ids);

}  // namespace dvfslab
