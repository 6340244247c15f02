#pragma once
// Several controls of one GPU acting as one (clock knobs plus workload power
// profiles): the guard still sees a single GpuControl. Each knob belongs to one
// member; the saved state is the union of the members' saved objects, whose keys
// are disjoint.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"

namespace dvfslab {

class ControlSet final : public GpuControl {
 public:
  explicit ControlSet(std::vector<std::unique_ptr<GpuControl>> members);

  std::vector<std::string> knobs() const override;
  nlohmann::json save() override;
  void apply(const Setting& setting, const nlohmann::json& saved, Changes& changes) override;
  void forget_applied() override;
  ControlStep restore_step(const std::string& knob, const nlohmann::json& saved) override;
  bool as_found(const std::string& knob, const nlohmann::json& saved) override;
  void check_saved(const nlohmann::json& saved, const std::vector<std::string>& touched) const override;
  std::optional<std::string> implausible(const nlohmann::json& saved,
                                         const std::vector<std::string>& touched) override;

 private:
  // The member that owns `knob`; std::invalid_argument for a knob none has.
  GpuControl& owner(const std::string& knob) const;
  // The knobs of `touched` that `member` owns.
  static std::vector<std::string> owned(const GpuControl& member, const std::vector<std::string>& touched);

  std::vector<std::unique_ptr<GpuControl>> members_;
};

}  // namespace dvfslab
