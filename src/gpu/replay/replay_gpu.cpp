#include "gpu/replay/replay_gpu.hpp"

#include <functional>
#include <type_traits>

#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "dvfslab/replay.hpp"

namespace dvfslab::replay {

ReplayGpu::ReplayGpu(ReplayTable table) : table_(std::move(table)) {
  identity_.name = table_.gpu_name();
  identity_.uuid = fmt::format("REPLAY-{:016x}",
                               std::hash<std::string>{}(table_.path().string() + "#" + table_.gpu_name()));
  identity_.backend = "replay";
  identity_.device_spec = "replay:" + table_.path().string() + "#" + table_.gpu_name();
  // The numbers are real measurements of the table's source, replayed: not simulated.
  identity_.simulated = false;
}

PowerLimits ReplayGpu::power_limits() { return with_current_limit(table_.power_limits()); }

std::optional<double> ReplayGpu::current_power_w() const {
  if (active_workload_.empty()) return std::nullopt;
  const auto measured = table_.find(active_workload_, current_setting_of(active_workload_));
  return measured ? std::optional<double>(measured->power_w) : std::nullopt;
}

void ReplayGpu::accumulate_energy() {
  const double now = clock_.now_s();
  energy_j_ += current_power_w().value_or(0.0) * (now - energy_time_s_);
  energy_time_s_ = now;
}

Telemetry ReplayGpu::read_telemetry() {
  accumulate_energy();
  Telemetry t;
  t.time_s = clock_.now_s();
  t.power_instant_w = current_power_w();
  t.power_average_w = t.power_instant_w;
  if (t.power_instant_w) t.energy_j = energy_j_;
  const Setting s = active_workload_.empty() ? current_setting() : current_setting_of(active_workload_);
  t.sm_mhz = s.sm_mhz;
  t.mem_mhz = s.mem_mhz;
  return t;
}

void ReplayGpu::run(const std::string& workload, double units) {
  const auto measured = table_.find(workload, current_setting_of(workload));
  if (!measured) {
    throw ConfigError(fmt::format(
        "{} has no measurement of '{}' on {} at {}: sweep only settings the table holds "
        "(`dvfslab info --device replay:...` lists them)",
        table_.path().string(), workload, table_.gpu_name(), to_string(current_setting_of(workload))));
  }
  accumulate_energy();
  active_workload_ = workload;
  clock_.advance(measured->time_s * units);
  accumulate_energy();
}

Setting ReplayGpu::default_setting() const { return table_.default_setting(); }

Setting ReplayGpu::default_setting_of(const std::string& workload) const {
  return table_.default_setting_of(workload);
}

void ReplayGpu::settle_before_change() { accumulate_energy(); }

}  // namespace dvfslab::replay

namespace dvfslab {

std::unique_ptr<Gpu> open_replay_gpu(std::string_view spec) {
  const auto hash = spec.find('#');
  const std::string path(spec.substr(0, hash));
  const std::string gpu = hash == std::string_view::npos ? "" : std::string(spec.substr(hash + 1));
  if (path.empty())
    throw UsageError("replay: needs a sweep table, e.g. --device replay:v100-kernels-core.csv");
  if (!std::filesystem::exists(path)) {
    throw ConfigError(fmt::format("replay:{}: no such file (give the path of a sweep-table CSV)", path));
  }
  return std::make_unique<replay::ReplayGpu>(replay::ReplayTable(path, gpu));
}

bool is_replay_gpu(const Gpu& gpu) { return dynamic_cast<const replay::ReplayGpu*>(&gpu) != nullptr; }

namespace {

template <typename GpuType>
auto& as_replay_gpu(GpuType& gpu) {
  using Replay = std::conditional_t<std::is_const_v<GpuType>, const replay::ReplayGpu, replay::ReplayGpu>;
  auto* replay_gpu = dynamic_cast<Replay*>(&gpu);
  if (replay_gpu == nullptr) {
    throw ConfigError(fmt::format("{} is not a replay GPU: replay workloads need --device replay:FILE.csv",
                                  gpu.identity().name));
  }
  return *replay_gpu;
}

}  // namespace

bool replay_holds(const Gpu& replay_gpu, const std::string& workload, const Setting& setting) {
  const auto& gpu = as_replay_gpu(replay_gpu);
  return gpu.table().find(workload, gpu.with_defaults_of(workload, setting)).has_value();
}

const std::vector<std::string>& replay_workload_keys(const Gpu& replay_gpu) {
  return as_replay_gpu(replay_gpu).table().workloads();
}

std::string replay_table_origin(const Gpu& replay_gpu) {
  const auto& table = as_replay_gpu(replay_gpu).table();
  return fmt::format("{} ({})", table.path().filename().string(), table.source());
}

std::optional<Setting> replay_own_baseline(const Gpu& replay_gpu, const std::string& workload) {
  const auto& table = as_replay_gpu(replay_gpu).table();
  const Setting baseline = table.default_setting_of(workload);
  if (baseline == table.default_setting()) return std::nullopt;
  return baseline;
}

std::optional<Setting> replay_unmarked_baseline(const Gpu& replay_gpu, const std::string& workload) {
  const auto& table = as_replay_gpu(replay_gpu).table();
  if (table.marks_default_of(workload)) return std::nullopt;
  return table.default_setting_of(workload);
}

void run_replayed_work(Gpu& replay_gpu, const std::string& workload, double units) {
  as_replay_gpu(replay_gpu).run(workload, units);
}

}  // namespace dvfslab
