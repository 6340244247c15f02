#pragma once
// How an AMD GPU applies settings and puts them back: four knobs of its own. The
// SCLK and MCLK levels hold only under the manual performance level, so the
// performance level is a knob journaled before the first level changes and put
// back last; the power cap is the fourth.
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"

namespace dvfslab::rocm {

class RocmGpu;

class RocmControl final : public GpuControl {
 public:
  explicit RocmControl(RocmGpu& gpu) : gpu_(gpu) {}

  std::vector<std::string> knobs() const override;
  // {"perf_level": "auto", "power_cap_w": 750.0}. ROCm SMI has no getter for the
  // enabled levels: with the performance level back as found, the driver's own
  // levels apply again, and a restored level knob enables every level.
  nlohmann::json save() override;
  void apply(const Setting& setting, const nlohmann::json& saved, Changes& changes) override;
  void forget_applied() override { applied_ = Targets{}; }
  ControlStep restore_step(const std::string& knob, const nlohmann::json& saved) override;
  bool as_found(const std::string& knob, const nlohmann::json& saved) override;
  void check_saved(const nlohmann::json& saved, const std::vector<std::string>& touched) const override;
  std::optional<std::string> implausible(const nlohmann::json& saved,
                                         const std::vector<std::string>& touched) override;

 private:
  struct Targets {
    bool manual = false;
    std::optional<int> sclk_mhz;
    std::optional<int> mclk_mhz;
    std::optional<int> power_cap_w;
  };

  RocmGpu& gpu_;
  Targets applied_;
};

}  // namespace dvfslab::rocm
