#pragma once
// The measurements of one GPU of a sweep table, indexed by workload and setting.
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab::replay {

struct Measured {
  double time_s = 0;  // per unit of work, mean over the table's repetitions
  double power_w = 0;
};

class ReplayTable {
 public:
  // Reads `path` and keeps the rows of `gpu_name` ("" = the file's only GPU).
  ReplayTable(const std::filesystem::path& path, const std::string& gpu_name);

  const std::string& gpu_name() const { return gpu_name_; }
  const std::string& source() const { return source_; }
  const std::filesystem::path& path() const { return path_; }
  // Workload keys in the order the table first lists them.
  const std::vector<std::string>& workloads() const { return workloads_; }
  // The measured setting a GPU in state `setting` is at: knobs the table does not
  // control are ignored. Absent when the table has no row for it.
  std::optional<Measured> find(const std::string& workload, const Setting& setting) const;
  // Every setting measured for any workload, in setting order (highest first).
  const std::vector<Setting>& settings() const { return settings_; }
  // The vendor-default setting (a row marked default), else the highest setting.
  const Setting& default_setting() const { return default_setting_; }
  // Where `workload` runs with nothing applied: its row marked default, else the
  // GPU's default where it has a row there, else its highest setting.
  Setting default_setting_of(const std::string& workload) const;
  // Whether the table marks a row of `workload` default; where not, its baseline
  // is a rule's choice, which a search says (docs/replay.md).
  bool marks_default_of(const std::string& workload) const { return marked_workloads_.count(workload) > 0; }
  ClockTable clock_table() const;
  PowerLimits power_limits() const;

 private:
  std::filesystem::path path_;
  std::string gpu_name_;
  std::string source_;
  std::vector<std::string> workloads_;
  std::map<std::pair<std::string, Setting>, Measured> measured_;
  std::vector<Setting> settings_;
  Setting default_setting_;
  std::map<std::string, Setting> workload_defaults_;
  std::set<std::string> marked_workloads_;
};

}  // namespace dvfslab::replay
