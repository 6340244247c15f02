#pragma once
// The control every backend has today: four knobs driven by Gpu's control calls
// (SM lock, memory lock, application clocks, power limit), saved as a
// ControlState. Locked clocks are tried first; a GPU that does not support them
// (pre-Volta SM, pre-Ampere memory) gets application clocks from then on.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dvfslab/gpu.hpp"

namespace dvfslab {

class ClockKnobControl final : public GpuControl {
 public:
  explicit ClockKnobControl(Gpu& gpu) : gpu_(gpu) {}

  std::vector<std::string> knobs() const override;
  nlohmann::json save() override;
  void apply(const Setting& setting, const nlohmann::json& saved, Changes& changes) override;
  void forget_applied() override { applied_ = Targets{}; }
  ControlStep restore_step(const std::string& knob, const nlohmann::json& saved) override;
  bool as_found(const std::string& knob, const nlohmann::json& saved) override;
  void check_saved(const nlohmann::json& saved, const std::vector<std::string>& touched) const override;
  std::optional<std::string> implausible(const nlohmann::json& saved,
                                         const std::vector<std::string>& touched) override;

 private:
  // What each knob should be for one setting; nullopt = as found.
  struct Targets {
    std::optional<int> sm_lock_mhz;
    std::optional<int> mem_lock_mhz;
    std::optional<std::pair<int, int>> application_mhz;  // (memory, graphics)
    std::optional<int> power_limit_w;
  };

  Targets targets_for(const Setting& setting, const ControlState& found);
  void apply_sm(const Targets& targets, Changes& changes);
  void apply_mem(const Targets& targets, Changes& changes);
  void apply_application(const Targets& targets, Changes& changes);
  void apply_power(const Targets& targets, Changes& changes);
  std::optional<std::string> implausible_clocks(const ControlState& found, const std::vector<std::string>& touched);

  Gpu& gpu_;
  std::optional<ClockTable> table_;  // read once, when application clocks are first needed
  // Whether locked clocks work: unknown until tried; false = application clocks.
  std::optional<bool> sm_lock_works_;
  std::optional<bool> mem_lock_works_;
  Targets applied_;
};

}  // namespace dvfslab
