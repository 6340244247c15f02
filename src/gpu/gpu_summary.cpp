#include "dvfslab/gpu_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "gpu/uncontrolled_memory.hpp"

namespace dvfslab {
namespace {

template <class T>
std::string reading(const std::optional<T>& value, std::string_view format) {
  return value ? fmt::format(fmt::runtime(format), *value) : "n/a";
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : std::string(separator)) + part;
  return text;
}

std::string format_power_limits(const PowerLimits& limits) {
  if (!limits.current_w && !limits.default_w) return "not reported";
  return fmt::format("{} (default {}, range {}–{})", reading(limits.current_w, "{:g} W"),
                     reading(limits.default_w, "{:g} W"), reading(limits.min_w, "{:g}"),
                     reading(limits.max_w, "{:g} W"));
}

std::string format_live(const Telemetry& t) {
  std::vector<std::string> parts = {
      fmt::format("power {} instant, {} averaged", reading(t.power_instant_w, "{:.1f} W"),
                  reading(t.power_average_w, "{:.1f} W")),
      fmt::format("SM {}, memory {}", reading(t.sm_mhz, "{} MHz"), reading(t.mem_mhz, "{} MHz")),
      fmt::format("GPU {}, memory {}", reading(t.gpu_temperature_c, "{:.0f} °C"),
                  reading(t.memory_temperature_c, "{:.0f} °C")),
      fmt::format("utilisation GPU {}, memory {}", reading(t.gpu_utilization_pct, "{} %"),
                  reading(t.memory_utilization_pct, "{} %")),
      fmt::format("energy counter {}", reading(t.energy_j, "{:.1f} J"))};
  return join(parts, "; ");
}

}  // namespace

std::string format_clock_list(const std::vector<int>& clocks_mhz) {
  if (clocks_mhz.empty()) return "none reported";
  std::vector<int> sorted = clocks_mhz;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.size() >= 3) {
    std::vector<int> steps;
    for (std::size_t i = 1; i < sorted.size(); ++i) steps.push_back(sorted[i] - sorted[i - 1]);
    const auto [smallest, largest] = std::minmax_element(steps.begin(), steps.end());
    const std::string range = fmt::format("{}–{} MHz", sorted.front(), sorted.back());
    if (*smallest > 0 && *smallest == *largest) {
      return fmt::format("{}, step {} ({} clocks)", range, *smallest, sorted.size());
    }
    // Tables such as the V100's step by 7.5 MHz, rounded to alternating 7 and 8.
    if (*smallest > 0 && *largest - *smallest == 1) {
      const double mean =
          static_cast<double>(sorted.back() - sorted.front()) / static_cast<double>(steps.size());
      return fmt::format("{}, step ≈{:.3g} ({} clocks)", range, mean, sorted.size());
    }
  }
  std::vector<std::string> listed;
  for (auto it = sorted.rbegin(); it != sorted.rend(); ++it) listed.push_back(std::to_string(*it));
  return join(listed, ", ") + " MHz";
}

std::string format_workload_power_profiles(const std::optional<WorkloadPowerProfiles>& profiles) {
  if (!profiles) return "not supported by this GPU or its driver";
  const auto names = [](const std::vector<int>& ids) {
    std::vector<std::string> listed;
    for (int id : ids) listed.push_back(workload_power_profile_name(id));
    return listed.empty() ? std::string("none") : join(listed, ", ");
  };
  std::vector<int> supported;
  for (const WorkloadPowerProfile& profile : profiles->supported) supported.push_back(profile.id);
  return fmt::format("{}; requested: {}; enforced: {}", names(supported), names(profiles->requested),
                     names(profiles->enforced));
}

std::string describe_gpu_text(Gpu& gpu) {
  const GpuIdentity& id = gpu.identity();
  const ClockTable table = gpu.clock_table();
  const Telemetry telemetry = gpu.read_telemetry();
  std::string text = fmt::format("GPU {}: {} ({}){}\n", id.index, id.name, id.architecture,
                                 id.simulated ? " — SIMULATED, not a real GPU" : "");
  const auto line = [&text](std::string_view label, const std::string& value) {
    text += fmt::format("  {:<21}{}\n", label, value);
  };
  line("UUID", id.uuid);
  line("PCI bus id", id.pci_bus_id);
  line("Driver / library", fmt::format("{} / {}", id.driver_version, id.library_version));
  if (id.mig_enabled)
    line("MIG mode", "enabled: clocks and power limit are shared, dvfslab does not change them");
  line("Memory clocks", format_clock_list(table.memory_mhz));
  for (int memory : table.memory_mhz) {
    const auto found = table.graphics_mhz.find(memory);
    line(fmt::format("Graphics @ {} MHz", memory),
         format_clock_list(found == table.graphics_mhz.end() ? std::vector<int>{} : found->second));
  }
  if (const auto uncontrolled = table.graphics_mhz.find(memory_not_controlled_mhz);
      uncontrolled != table.graphics_mhz.end()) {
    line("Graphics (any mem.)", format_clock_list(uncontrolled->second));
  }
  line("Default app clocks",
       fmt::format("graphics {}, memory {}", reading(table.default_graphics_mhz, "{} MHz"),
                   reading(table.default_memory_mhz, "{} MHz")));
  line("Power limit", format_power_limits(gpu.power_limits()));
  line("Workload profiles", format_workload_power_profiles(workload_power_profiles(gpu)));
  line(id.simulated ? "Now (SIMULATED)" : "Now", format_live(telemetry));
  std::string reasons = "n/a";
  if (telemetry.throttle_reasons) {
    reasons = *telemetry.throttle_reasons == 0
                  ? "none"
                  : join(throttle_reason_names(*telemetry.throttle_reasons), ", ");
  }
  line("Clock events", reasons);
  return text;
}

}  // namespace dvfslab
