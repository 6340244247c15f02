#include "gpu/replay/replay_table.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "dvfslab/sweep_table.hpp"
#include "gpu/uncontrolled_memory.hpp"

namespace dvfslab::replay {
namespace {

// find() reads which knobs the table controls from one setting, so a knob set in
// some rows of a GPU and blank in others would leave those rows never replayed; and
// such a blank is ambiguous (the GPU's own choice, or a value not recorded).
void check_knob_columns_agree(const std::filesystem::path& path, const ResultRow& first, const ResultRow& row) {
  const std::pair<const char*, std::optional<int> Setting::*> knob_columns[] = {
      {"core_mhz", &Setting::sm_mhz}, {"mem_mhz", &Setting::mem_mhz}, {"power_limit_w", &Setting::power_limit_w}};
  for (const auto& [column, knob] : knob_columns) {
    if ((first.setting.*knob).has_value() == (row.setting.*knob).has_value()) continue;
    throw ConfigError(fmt::format(
        "{}: {} sets {} in some rows and leaves it blank in others ({} at {}): fill it in every row of "
        "the GPU or in none",
        path.string(), row.gpu, column, row.workload_case.workload, to_string(row.setting)));
  }
}

}  // namespace

ReplayTable::ReplayTable(const std::filesystem::path& path, const std::string& gpu_name) : path_(path) {
  const std::vector<ResultRow> rows = read_sweep_table(path);
  std::vector<std::string> gpus;
  for (const ResultRow& row : rows) {
    if (std::find(gpus.begin(), gpus.end(), row.gpu) == gpus.end()) gpus.push_back(row.gpu);
  }
  const auto gpu_list = [&] {
    std::string list;
    for (const auto& name : gpus) list += (list.empty() ? "" : ", ") + name;
    return list;
  };
  if (gpus.empty())
    throw ConfigError(fmt::format("{}: the sweep table holds no rows to replay", path.string()));
  if (gpu_name.empty() && gpus.size() > 1) {
    throw ConfigError(fmt::format("{} holds several GPUs ({}): choose one with replay:{}#GPU NAME",
                                  path.string(), gpu_list(), path.string()));
  }
  gpu_name_ = gpu_name.empty() ? gpus.front() : gpu_name;
  if (std::find(gpus.begin(), gpus.end(), gpu_name_) == gpus.end()) {
    throw ConfigError(
        fmt::format("{} has no GPU named '{}': it holds {}", path.string(), gpu_name_, gpu_list()));
  }

  // Sum the repetitions of each (workload, setting), then average.
  std::map<std::pair<std::string, Setting>, std::pair<Measured, int>> sums;
  std::set<Setting> settings;
  std::optional<Setting> marked_default;
  std::map<std::string, Setting> marked_by_workload;
  const ResultRow* first_row = nullptr;
  for (const ResultRow& row : rows) {
    if (row.gpu != gpu_name_) continue;
    if (!first_row) first_row = &row;
    check_knob_columns_agree(path, *first_row, row);
    if (source_.empty()) source_ = row.source;
    const std::string& workload = row.workload_case.workload;
    if (std::find(workloads_.begin(), workloads_.end(), workload) == workloads_.end())
      workloads_.push_back(workload);
    auto& [sum, count] = sums[{workload, row.setting}];
    sum.time_s += row.time_per_iteration_s;
    sum.power_w += row.mean_power_w;
    ++count;
    settings.insert(row.setting);
    if (row.is_default && (!marked_default || setting_order_before(row.setting, *marked_default))) {
      marked_default = row.setting;
    }
    if (row.is_default) {
      const auto marked = marked_by_workload.find(workload);
      if (marked == marked_by_workload.end() || setting_order_before(row.setting, marked->second))
        marked_by_workload[workload] = row.setting;
    }
  }
  for (const auto& [key, entry] : sums) {
    measured_[key] = {entry.first.time_s / entry.second, entry.first.power_w / entry.second};
  }
  settings_.assign(settings.begin(), settings.end());
  std::sort(settings_.begin(), settings_.end(), setting_order_before);
  default_setting_ = marked_default ? *marked_default : settings_.front();
  for (const std::string& workload : workloads_) {
    if (const auto marked = marked_by_workload.find(workload); marked != marked_by_workload.end()) {
      workload_defaults_[workload] = marked->second;
      marked_workloads_.insert(workload);
    } else if (measured_.count({workload, default_setting_})) {
      workload_defaults_[workload] = default_setting_;
    } else {
      // settings_ is highest first: the first the workload was measured at.
      workload_defaults_[workload] = *std::find_if(settings_.begin(), settings_.end(), [&](const Setting& s) {
        return measured_.count({workload, s}) > 0;
      });
    }
  }
}

Setting ReplayTable::default_setting_of(const std::string& workload) const {
  const auto it = workload_defaults_.find(workload);
  return it == workload_defaults_.end() ? default_setting_ : it->second;
}

std::optional<Measured> ReplayTable::find(const std::string& workload, const Setting& setting) const {
  // The table's rows fix which knobs it controls: a knob absent in the table matches anything.
  const Setting& any = settings_.front();
  const Setting key{any.sm_mhz ? setting.sm_mhz : std::nullopt, any.mem_mhz ? setting.mem_mhz : std::nullopt,
                    any.power_limit_w ? setting.power_limit_w : std::nullopt};
  const auto it = measured_.find({workload, key});
  if (it == measured_.end()) return std::nullopt;
  return it->second;
}

ClockTable ReplayTable::clock_table() const {
  ClockTable table;
  std::map<int, std::set<int, std::greater<>>, std::greater<>> graphics_by_memory;
  for (const Setting& s : settings_) {
    // A table that sweeps the memory clock alone lists each memory clock with no graphics clocks.
    if (!s.sm_mhz && !s.mem_mhz) continue;
    auto& graphics = graphics_by_memory[s.mem_mhz.value_or(memory_not_controlled_mhz)];
    if (s.sm_mhz) graphics.insert(*s.sm_mhz);
  }
  for (const auto& [memory, graphics] : graphics_by_memory) {
    if (memory != memory_not_controlled_mhz) table.memory_mhz.push_back(memory);
    table.graphics_mhz[memory].assign(graphics.begin(), graphics.end());
  }
  table.default_graphics_mhz = default_setting_.sm_mhz;
  table.default_memory_mhz = default_setting_.mem_mhz;
  return table;
}

PowerLimits ReplayTable::power_limits() const {
  PowerLimits limits;
  for (const Setting& s : settings_) {
    if (!s.power_limit_w) continue;
    const double watts = *s.power_limit_w;
    limits.min_w = limits.min_w ? std::min(*limits.min_w, watts) : watts;
    limits.max_w = limits.max_w ? std::max(*limits.max_w, watts) : watts;
  }
  if (default_setting_.power_limit_w) limits.default_w = *default_setting_.power_limit_w;
  return limits;
}

}  // namespace dvfslab::replay
