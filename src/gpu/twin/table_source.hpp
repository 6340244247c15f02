#pragma once
// A sweep table as a twin's source: the measured time and power of each setting
// the table holds, nothing in between (docs/twins.md#settings).
#include <filesystem>
#include <string>

#include "dvfslab/twin.hpp"
#include "gpu/replay/replay_table.hpp"

namespace dvfslab::twin {

class TableSource final : public TwinSource {
 public:
  // Reads `path` and keeps the rows of `gpu_name` ("" = the file's only GPU).
  TableSource(const std::filesystem::path& path, const std::string& gpu_name);

  std::string gpu_name() const override { return table_.gpu_name(); }
  std::string origin() const override;
  const std::vector<std::string>& workloads() const override { return table_.workloads(); }
  ClockTable clock_table() const override { return table_.clock_table(); }
  PowerLimits power_limits() const override { return table_.power_limits(); }
  Setting default_setting() const override { return table_.default_setting(); }
  Setting default_setting_of(const std::string& workload) const override {
    return table_.default_setting_of(workload);
  }
  std::optional<TwinRates> rates(const std::string& workload, const Setting& setting) const override;
  // The table measures no idle GPU: its lowest power, a bound from above.
  double idle_power_w() const override { return idle_power_w_; }

 private:
  replay::ReplayTable table_;
  double idle_power_w_ = 0;
};

}  // namespace dvfslab::twin
