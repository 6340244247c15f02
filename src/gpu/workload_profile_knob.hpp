#pragma once
// The workload-power-profile knob of a GPU whose backend has profiles
// (WorkloadPowerProfileControl): a Setting's workload_profile becomes the GPU's
// whole request, and the request found is what the guard journals and restores.
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/workload_power_profiles.hpp"

namespace dvfslab {

class WorkloadProfileKnob final : public GpuControl {
 public:
  explicit WorkloadProfileKnob(Gpu& gpu) : gpu_(gpu) {}

  std::vector<std::string> knobs() const override;
  nlohmann::json save() override;
  void apply(const Setting& setting, const nlohmann::json& saved, Changes& changes) override;
  void forget_applied() override { applied_.reset(); }
  ControlStep restore_step(const std::string& knob, const nlohmann::json& saved) override;
  bool as_found(const std::string& knob, const nlohmann::json& saved) override;
  void check_saved(const nlohmann::json& saved, const std::vector<std::string>& touched) const override;
  std::optional<std::string> implausible(const nlohmann::json& saved,
                                         const std::vector<std::string>& touched) override;

 private:
  // The GPU's profiles when it may be asked for `wanted`; PermissionError in
  // read-only mode, NotSupportedError without profiles or for one it lacks.
  WorkloadPowerProfiles requestable(const std::vector<int>& wanted);
  // Makes `wanted` (ascending ids) the GPU's whole request: removes what else is
  // requested, then adds what is missing; no call for what is already so.
  void request_exactly(const std::vector<int>& wanted);

  Gpu& gpu_;
  std::optional<int> applied_;  // the profile the last apply() requested
};

}  // namespace dvfslab
