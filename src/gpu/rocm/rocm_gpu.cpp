#include "gpu/rocm/rocm_gpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <utility>

#include "dvfslab/error.hpp"
#include "gpu/rocm/rocm_control.hpp"
#include "gpu/rocm/rocm_errors.hpp"

namespace dvfslab::rocm {
namespace {

constexpr std::array<std::string_view, 9> perf_level_names = {
    "auto",       "low", "high", "manual", "stable_std", "stable_peak", "stable_min_mclk", "stable_min_sclk",
    "determinism"};

constexpr double microwatts_per_watt = 1e6;
constexpr double hz_per_mhz = 1e6;

int to_mhz(std::uint64_t hz) { return static_cast<int>(std::llround(static_cast<double>(hz) / hz_per_mhz)); }

std::vector<int> descending_mhz(const Frequencies& levels) {
  std::vector<int> mhz;
  for (std::uint32_t i = 0; i < levels.num_supported && i < max_frequencies; ++i)
    mhz.push_back(to_mhz(levels.frequency[i]));
  std::sort(mhz.begin(), mhz.end(), std::greater<>());
  return mhz;
}

std::uint64_t every_level_mask(const Frequencies& levels) {
  const std::uint32_t count = std::min<std::uint32_t>(levels.num_supported, max_frequencies);
  return count >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1;
}

// ROCm SMI packs a PCI address as domain << 32 | bus << 8 | device << 3 | function.
std::string pci_bus_id_text(std::uint64_t bdf) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", (bdf >> 32) & 0xffffffff, (bdf >> 8) & 0xff,
                     (bdf >> 3) & 0x1f, bdf & 0x7);
}

void refuse_in_read_only_mode(const Gpu& gpu, std::string_view action) {
  if (gpu.read_only()) {
    throw PermissionError(
        fmt::format("refused to {}: DVFSLAB_READ_ONLY=1 forbids every clock and power-limit "
                    "change (unset it to allow control calls)",
                    action));
  }
}

}  // namespace

std::string_view perf_level_name(PerfLevel level) {
  return level < perf_level_names.size() ? perf_level_names[level] : "unknown";
}

std::optional<PerfLevel> perf_level_from_name(std::string_view name) {
  const auto it = std::find(perf_level_names.begin(), perf_level_names.end(), name);
  if (it == perf_level_names.end()) return std::nullopt;
  return static_cast<PerfLevel>(it - perf_level_names.begin());
}

RocmGpu::RocmGpu(std::shared_ptr<Library> library, std::uint32_t index)
    : library_(std::move(library)), index_(index) {
  identity_.index = static_cast<int>(index);
  identity_.backend = "rocm";
  read_identity();
}

template <Entry E, class... Args>
void RocmGpu::call(std::string_view action, Args... args) {
  const Status status = library_->get<E>(action)(index_, args...);
  if (status != success) fail(E, status, action);
}

template <Entry E, class... Args>
bool RocmGpu::try_call(std::string_view action, Args... args) {
  auto* function = library_->find<E>();
  if (function == nullptr) return false;
  const Status status = function(index_, args...);
  if (status == success) return true;
  if (status == status_not_supported || status == status_not_yet_implemented) return false;
  fail(E, status, action);
}

void RocmGpu::fail(Entry entry, Status status, std::string_view action) {
  const std::string gpu = identity_.name.empty() ? fmt::format("AMD GPU {}", index_)
                                                 : fmt::format("AMD GPU {} ({})", index_, identity_.name);
  throw_error(status,
              Failure{gpu, std::string(action), library_->symbol_name(entry), library_->describe(status)});
}

void RocmGpu::read_identity() {
  std::array<char, 256> name{};
  call<Entry::dev_name_get>("read the GPU name", name.data(), name.size());
  identity_.name = std::string(name.data(), std::find(name.begin(), name.end(), '\0'));

  std::uint64_t bdf = 0;
  call<Entry::dev_pci_id_get>("read the PCI bus id", &bdf);
  identity_.pci_bus_id = pci_bus_id_text(bdf);
  // The unique id survives a reboot; boards without one are named by their PCI address.
  std::uint64_t unique_id = 0;
  identity_.uuid = try_call<Entry::dev_unique_id_get>("read the GPU's unique id", &unique_id)
                       ? fmt::format("AMD-{:016x}", unique_id)
                       : "AMD-pci-" + identity_.pci_bus_id;
  identity_.device_spec = "amd:" + identity_.uuid;
  identity_.architecture = "unknown";

  std::array<char, 256> version{};
  if (auto* driver_version = library_->find<Entry::version_str_get>();
      driver_version != nullptr && driver_version(component_driver, version.data(),
                                                  static_cast<std::uint32_t>(version.size())) == success) {
    identity_.driver_version = std::string(version.data(), std::find(version.begin(), version.end(), '\0'));
  }
  Version library_version{};
  if (auto* get_version = library_->find<Entry::version_get>();
      get_version != nullptr && get_version(&library_version) == success) {
    identity_.library_version =
        fmt::format("{}.{}.{}", library_version.major, library_version.minor, library_version.patch);
  }
}

Frequencies RocmGpu::levels(ClockType type, std::string_view action) {
  Frequencies levels{};
  call<Entry::dev_gpu_clk_freq_get>(action, type, &levels);
  return levels;
}

ClockTable RocmGpu::clock_table() {
  ClockTable table;
  Frequencies sclk{};
  Frequencies mclk{};
  if (!try_call<Entry::dev_gpu_clk_freq_get>("list the SCLK levels", clock_system, &sclk) ||
      !try_call<Entry::dev_gpu_clk_freq_get>("list the MCLK levels", clock_memory, &mclk)) {
    return table;
  }
  // Any SCLK level can be enabled with any MCLK level.
  table.memory_mhz = descending_mhz(mclk);
  const std::vector<int> graphics = descending_mhz(sclk);
  for (int memory : table.memory_mhz) table.graphics_mhz[memory] = graphics;
  // With the automatic performance level a loaded GPU reaches its top levels.
  if (!graphics.empty() && !table.memory_mhz.empty()) {
    table.default_graphics_mhz = graphics.front();
    table.default_memory_mhz = table.memory_mhz.front();
  }
  return table;
}

PowerLimits RocmGpu::power_limits() {
  PowerLimits limits;
  std::uint64_t microwatts = 0;
  std::uint64_t max_microwatts = 0;
  if (try_call<Entry::dev_power_cap_default_get>("read the default power cap", &microwatts)) {
    limits.default_w = static_cast<double>(microwatts) / microwatts_per_watt;
  }
  if (try_call<Entry::dev_power_cap_range_get>("read the power-cap range", 0u, &max_microwatts,
                                               &microwatts)) {
    limits.min_w = static_cast<double>(microwatts) / microwatts_per_watt;
    limits.max_w = static_cast<double>(max_microwatts) / microwatts_per_watt;
  }
  if (try_call<Entry::dev_power_cap_get>("read the power cap", 0u, &microwatts)) {
    limits.current_w = static_cast<double>(microwatts) / microwatts_per_watt;
  }
  return limits;
}

Telemetry RocmGpu::read_telemetry() {
  Telemetry telemetry;
  telemetry.time_s = clock_.now_s();
  std::uint64_t microwatts = 0;
  if (try_call<Entry::dev_power_ave_get>("read the averaged power", 0u, &microwatts)) {
    telemetry.power_average_w = static_cast<double>(microwatts) / microwatts_per_watt;
  }
  // The counter counts in units of `resolution` microjoules, in 64 bits (no wrap
  // within a measurement).
  std::uint64_t counter = 0;
  float resolution_uj = 0;
  std::uint64_t timestamp_ns = 0;
  if (try_call<Entry::dev_energy_count_get>("read the energy counter", &counter, &resolution_uj,
                                            &timestamp_ns)) {
    telemetry.energy_j = static_cast<double>(counter) * static_cast<double>(resolution_uj) / 1e6;
  }
  Frequencies levels{};
  if (try_call<Entry::dev_gpu_clk_freq_get>("read the SCLK", clock_system, &levels) &&
      levels.current < std::min<std::uint32_t>(levels.num_supported, max_frequencies)) {
    telemetry.sm_mhz = to_mhz(levels.frequency[levels.current]);
  }
  if (try_call<Entry::dev_gpu_clk_freq_get>("read the MCLK", clock_memory, &levels) &&
      levels.current < std::min<std::uint32_t>(levels.num_supported, max_frequencies)) {
    telemetry.mem_mhz = to_mhz(levels.frequency[levels.current]);
  }
  // MI300 boards have no edge sensor: the junction (hotspot) stands in.
  std::int64_t millidegrees = 0;
  if (try_call<Entry::dev_temp_metric_get>("read the edge temperature", temperature_edge, temperature_current,
                                           &millidegrees) ||
      try_call<Entry::dev_temp_metric_get>("read the junction temperature", temperature_junction,
                                           temperature_current, &millidegrees)) {
    telemetry.gpu_temperature_c = static_cast<double>(millidegrees) / 1000.0;
  }
  if (try_call<Entry::dev_temp_metric_get>("read the memory temperature", temperature_memory,
                                           temperature_current, &millidegrees)) {
    telemetry.memory_temperature_c = static_cast<double>(millidegrees) / 1000.0;
  }
  std::uint32_t percent = 0;
  if (try_call<Entry::dev_busy_percent_get>("read the GPU activity", &percent)) {
    telemetry.gpu_utilization_pct = static_cast<int>(percent);
  }
  if (try_call<Entry::dev_memory_busy_percent_get>("read the memory activity", &percent)) {
    telemetry.memory_utilization_pct = static_cast<int>(percent);
  }
  return telemetry;
}

ControlState RocmGpu::control_state() {
  ControlState state;
  std::uint64_t microwatts = 0;
  if (try_call<Entry::dev_power_cap_get>("read the power cap", 0u, &microwatts)) {
    state.power_limit_w = static_cast<double>(microwatts) / microwatts_per_watt;
  }
  return state;
}

std::unique_ptr<GpuControl> RocmGpu::control() { return std::make_unique<RocmControl>(*this); }

PerfLevel RocmGpu::performance_level() {
  PerfLevel level = perf_level_unknown;
  call<Entry::dev_perf_level_get>("read the performance level", &level);
  return level;
}

void RocmGpu::set_performance_level(PerfLevel level) {
  const std::string action = fmt::format("set the performance level to {}", perf_level_name(level));
  refuse_in_read_only_mode(*this, action);
  call<Entry::dev_perf_level_set>(action, level);
}

void RocmGpu::enable_levels(ClockType type, std::string_view clock_name, int min_mhz, int max_mhz) {
  const Frequencies available = levels(type, fmt::format("list the {} levels", clock_name));
  std::uint64_t mask = 0;
  for (std::uint32_t i = 0; i < available.num_supported && i < max_frequencies; ++i) {
    const int mhz = to_mhz(available.frequency[i]);
    if (mhz >= min_mhz && mhz <= max_mhz) mask |= std::uint64_t{1} << i;
  }
  if (mask == 0) {
    throw ConfigError(fmt::format("AMD GPU {} ({}) has no {} level within {}–{} MHz; its levels: {} MHz",
                                  index_, identity_.name, clock_name, min_mhz, max_mhz,
                                  fmt::join(descending_mhz(available), ", ")));
  }
  call<Entry::dev_gpu_clk_freq_set>(
      fmt::format("enable the {} levels within {}–{} MHz (mask {:#x})", clock_name, min_mhz, max_mhz, mask),
      type, mask);
}

void RocmGpu::enable_every_level(ClockType type, std::string_view clock_name) {
  const Frequencies available = levels(type, fmt::format("list the {} levels", clock_name));
  call<Entry::dev_gpu_clk_freq_set>(fmt::format("enable every {} level", clock_name), type,
                                    every_level_mask(available));
}

void RocmGpu::do_lock_sm_clocks(int min_mhz, int max_mhz) {
  enable_levels(clock_system, "SCLK", min_mhz, max_mhz);
}

void RocmGpu::do_reset_sm_clocks() { enable_every_level(clock_system, "SCLK"); }

void RocmGpu::do_lock_memory_clocks(int min_mhz, int max_mhz) {
  enable_levels(clock_memory, "MCLK", min_mhz, max_mhz);
}

void RocmGpu::do_reset_memory_clocks() { enable_every_level(clock_memory, "MCLK"); }

void RocmGpu::do_set_application_clocks(int /*memory_mhz*/, int /*graphics_mhz*/) {
  throw NotSupportedError(
      fmt::format("AMD GPU {} ({}) has no application clocks: dvfslab sets its SCLK and MCLK levels instead",
                  index_, identity_.name));
}

void RocmGpu::do_reset_application_clocks() { do_set_application_clocks(0, 0); }

void RocmGpu::do_set_power_limit(double watts) {
  call<Entry::dev_power_cap_set>(fmt::format("set the power cap to {} W", watts), 0u,
                                 static_cast<std::uint64_t>(std::llround(watts * microwatts_per_watt)));
}

void RocmGpu::do_reset_power_limit() {
  std::uint64_t microwatts = 0;
  call<Entry::dev_power_cap_default_get>("read the default power cap", &microwatts);
  call<Entry::dev_power_cap_set>("reset the power cap to its default", 0u, microwatts);
}

}  // namespace dvfslab::rocm
