#pragma once
// A fitted model (model.json, dvfslab/model.hpp) as a twin's source: predicted time
// and power on a grid over the range the model was fitted on (docs/twins.md#models).
#include <filesystem>
#include <string>
#include <vector>

#include "dvfslab/model.hpp"
#include "dvfslab/twin.hpp"

namespace dvfslab::twin {

class ModelSource final : public TwinSource {
 public:
  // Reads `path` and keeps the models of `gpu_name` ("" = the file's only GPU).
  ModelSource(const std::filesystem::path& path, const std::string& gpu_name);

  std::string gpu_name() const override { return gpu_name_; }
  std::string origin() const override;
  const std::vector<std::string>& workloads() const override { return workloads_; }
  ClockTable clock_table() const override { return clock_table_; }
  PowerLimits power_limits() const override { return power_limits_; }
  Setting default_setting() const override { return default_setting_; }
  std::optional<TwinRates> rates(const std::string& workload, const Setting& setting) const override;
  // A model predicts no idle GPU: the lowest power it predicts on its grid, a bound from above.
  double idle_power_w() const override { return idle_power_w_; }

 private:
  // Throws ConfigError naming the file when a model predicts a time or power that
  // is not positive and finite somewhere on the grid.
  void check_rates() const;

  std::filesystem::path path_;
  std::string gpu_name_;
  std::vector<model::Model> models_;
  std::vector<std::string> workloads_;
  ClockTable clock_table_;
  PowerLimits power_limits_;
  Setting default_setting_;
  double idle_power_w_ = 0;
};

}  // namespace dvfslab::twin
