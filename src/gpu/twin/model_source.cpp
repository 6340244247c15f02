#include "gpu/twin/model_source.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "dvfslab/error.hpp"

namespace dvfslab::twin {
namespace {

// NVIDIA's graphics clock step on Volta and newer: the grid between the fitted ends.
constexpr int graphics_step_mhz = 15;

int whole_mhz(double mhz) { return static_cast<int>(std::lround(mhz)); }

std::vector<model::Model> models_of(const std::filesystem::path& path, const std::string& wanted_gpu) {
  std::vector<model::Model> all = model::read_models(path);
  std::set<std::string> gpus;
  for (const model::Model& m : all) gpus.insert(m.gpu());
  std::string gpu = wanted_gpu;
  if (gpu.empty()) {
    if (gpus.size() != 1) {
      throw ConfigError(fmt::format("{} holds models of {} GPUs ({}); name one: twin:{}#GPU NAME",
                                    path.string(), gpus.size(), fmt::join(gpus, ", "), path.string()));
    }
    gpu = *gpus.begin();
  }
  std::vector<model::Model> kept;
  for (model::Model& m : all) {
    if (m.gpu() == gpu) kept.push_back(std::move(m));
  }
  if (kept.empty()) {
    throw ConfigError(
        fmt::format("{} has no model of GPU '{}'; its GPUs: {}", path.string(), gpu, fmt::join(gpus, ", ")));
  }
  return kept;
}

// Every setting the twin offers, with the power limit at its ends (and unset).
std::vector<Setting> settings_to_check(const ClockTable& clocks, const PowerLimits& limits,
                                       const Setting& default_setting) {
  std::vector<std::optional<int>> power_limits = {std::nullopt};
  if (limits.min_w) power_limits = {whole_mhz(*limits.min_w), whole_mhz(*limits.max_w)};
  std::vector<Setting> settings;
  for (const std::optional<int>& limit : power_limits) {
    if (clocks.memory_mhz.empty())
      settings.push_back(Setting{default_setting.sm_mhz, default_setting.mem_mhz, limit});
    for (const auto& [memory, graphics] : clocks.graphics_mhz) {
      if (graphics.empty()) settings.push_back(Setting{std::nullopt, memory, limit});
      for (int clock : graphics) settings.push_back(Setting{clock, memory, limit});
    }
  }
  return settings;
}

}  // namespace

void ModelSource::check_rates() const {
  for (const model::Model& m : models_) {
    for (const Setting& setting : settings_to_check(clock_table_, power_limits_, default_setting_)) {
      const model::Prediction predicted = m.predict(setting);
      const double time_s = predicted.time_s.value, power_w = predicted.power_w.value;
      // A time of 0 (all time coefficients 0) or an overflow (1e308) would give a
      // twin whose work takes no time or forever.
      if (!(std::isfinite(time_s) && time_s > 0 && std::isfinite(power_w) && power_w > 0)) {
        throw ConfigError(
            fmt::format("{}: the model of {} predicts {:g} s per unit and {:g} W at {}: a twin needs a "
                        "positive, finite time and power at every setting of its range; fit it again "
                        "with `dvfslab model fit`",
                        path_.string(), m.workload(), time_s, power_w, to_string(setting)));
      }
    }
  }
}

ModelSource::ModelSource(const std::filesystem::path& path, const std::string& gpu_name)
    : path_(path), models_(models_of(path, gpu_name)) {
  gpu_name_ = models_.front().gpu();
  // The union of the models' domains: every workload runs on the same board.
  model::Model::Domain all = models_.front().domain();
  for (const model::Model& m : models_) {
    workloads_.push_back(m.workload());
    const model::Model::Domain d = m.domain();
    all.sm_low_mhz = std::min(all.sm_low_mhz, d.sm_low_mhz);
    all.sm_high_mhz = std::max(all.sm_high_mhz, d.sm_high_mhz);
    all.mem_low_mhz = std::min(all.mem_low_mhz, d.mem_low_mhz);
    all.mem_high_mhz = std::max(all.mem_high_mhz, d.mem_high_mhz);
    if (d.power_limit_low_w) {
      all.power_limit_low_w =
          std::min(all.power_limit_low_w.value_or(*d.power_limit_low_w), *d.power_limit_low_w);
      all.power_limit_high_w =
          std::max(all.power_limit_high_w.value_or(*d.power_limit_high_w), *d.power_limit_high_w);
    }
  }
  const bool sm_controlled = all.sm_low_mhz < all.sm_high_mhz || all.default_sm_mhz.has_value();
  // A fit of memory clocks alone (a table with a blank core_mhz) lists its memory
  // clocks with no SM clock beside them, as the replayed table does.
  const bool memory_only = !sm_controlled && (all.mem_low_mhz < all.mem_high_mhz || all.default_mem_mhz);
  if (sm_controlled || memory_only) {
    std::vector<int> graphics;
    if (sm_controlled) {
      const int top = whole_mhz(all.sm_high_mhz);
      const int bottom = whole_mhz(all.sm_low_mhz);
      for (int mhz = top; mhz > bottom; mhz -= graphics_step_mhz) graphics.push_back(mhz);
      graphics.push_back(bottom);
      default_setting_.sm_mhz = whole_mhz(all.default_sm_mhz.value_or(all.sm_high_mhz));
    }
    std::set<int, std::greater<>> memory = {whole_mhz(all.mem_high_mhz), whole_mhz(all.mem_low_mhz)};
    for (int mhz : memory) {
      clock_table_.memory_mhz.push_back(mhz);
      clock_table_.graphics_mhz[mhz] = graphics;
    }
    default_setting_.mem_mhz = whole_mhz(all.default_mem_mhz.value_or(all.mem_high_mhz));
    clock_table_.default_graphics_mhz = default_setting_.sm_mhz;
    clock_table_.default_memory_mhz = default_setting_.mem_mhz;
  }
  if (all.power_limit_low_w) {
    power_limits_.min_w = *all.power_limit_low_w;
    power_limits_.max_w = *all.power_limit_high_w;
    power_limits_.default_w = all.default_power_limit_w.value_or(*all.power_limit_high_w);
    default_setting_.power_limit_w = whole_mhz(*power_limits_.default_w);
  }
  check_rates();
  bool first = true;
  for (const model::Model& m : models_) {
    Setting lowest = default_setting_;
    if (sm_controlled) lowest.sm_mhz = clock_table_.graphics_mhz.begin()->second.back();
    const double watts = m.predict(lowest).power_w.value;
    idle_power_w_ = first ? watts : std::min(idle_power_w_, watts);
    first = false;
  }
}

std::string ModelSource::origin() const {
  return fmt::format("{} (fitted model)", path_.filename().string());
}

std::optional<TwinRates> ModelSource::rates(const std::string& workload, const Setting& setting) const {
  const model::Model* m = model::find_model(models_, gpu_name_, workload);
  if (m == nullptr) return std::nullopt;
  if (setting.sm_mhz && !clock_table_.supports(setting.mem_mhz.value_or(0), *setting.sm_mhz))
    return std::nullopt;
  if (setting.power_limit_w && power_limits_.min_w &&
      (*setting.power_limit_w < *power_limits_.min_w || *setting.power_limit_w > *power_limits_.max_w)) {
    return std::nullopt;
  }
  const model::Prediction predicted = m->predict(setting);
  return TwinRates{predicted.time_s.value, predicted.power_w.value};
}

}  // namespace dvfslab::twin
