#include "fake_rocm_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dvfslab/error.hpp"
#include "gpu/rocm/rocm_gpu.hpp"

namespace dvfslab::fake_rocm {
namespace {

using nlohmann::json;

std::unique_ptr<State> current;
int init_count = 0;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

bool flag(const char* name) {
  const std::string value = environment(name);
  return !value.empty() && value != "0";
}

std::uint64_t every_level(std::size_t count) { return (std::uint64_t{1} << count) - 1; }

std::string level_name(rocm::PerfLevel level) { return std::string(rocm::perf_level_name(level)); }

rocm::PerfLevel level_from_name(const std::string& name) {
  if (const auto level = rocm::perf_level_from_name(name)) return *level;
  throw ConfigError(fmt::format("fake ROCm SMI: unknown performance level '{}' in the state file", name));
}

// The lowest and highest enabled level of `mask`, or nullopt when every level is enabled.
std::optional<std::pair<int, int>> enabled_range(const std::vector<int>& levels, std::uint64_t mask) {
  if (mask == every_level(levels.size())) return std::nullopt;
  std::optional<std::pair<int, int>> range;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    if ((mask >> i & 1U) == 0) continue;
    if (!range) range = std::pair{levels[i], levels[i]};
    range->second = levels[i];
  }
  return range;
}

void save_state(const State& state) {
  if (state.state_path.empty()) return;
  json devices = json::array();
  for (const FakeDevice& device : state.devices) {
    devices.push_back({{"index", device.index},
                       {"controls",
                        {{"perf_level", level_name(device.perf_level)},
                         {"sclk_mask", device.sclk_mask},
                         {"mclk_mask", device.mclk_mask},
                         {"power_cap_w", device.power_cap_w}}}});
  }
  const std::string temporary = state.state_path + ".tmp";
  std::ofstream(temporary) << json{{"devices", devices}}.dump(2) << '\n';
  std::filesystem::rename(temporary, state.state_path);
}

void load_state(State& state) {
  if (state.state_path.empty() || !std::filesystem::exists(state.state_path)) return;
  const json document = json::parse(std::ifstream(state.state_path));
  for (const json& entry : document.at("devices")) {
    const int index = entry.at("index").get<int>();
    if (index < 0 || static_cast<std::size_t>(index) >= state.devices.size()) continue;
    FakeDevice& device = state.devices[static_cast<std::size_t>(index)];
    const json& controls = entry.at("controls");
    if (controls.contains("perf_level")) device.perf_level = level_from_name(controls.at("perf_level"));
    if (controls.contains("sclk_mask")) device.sclk_mask = controls.at("sclk_mask");
    if (controls.contains("mclk_mask")) device.mclk_mask = controls.at("mclk_mask");
    if (controls.contains("power_cap_w")) device.power_cap_w = controls.at("power_cap_w");
  }
}

void apply_controls(FakeDevice& device) {
  ControlState controls;
  // Only the manual performance level holds the enabled levels; every other one
  // lets the firmware choose among all of them.
  if (device.perf_level == rocm::perf_level_manual) {
    if (const auto sclk = enabled_range(device.sclk_levels_mhz(), device.sclk_mask)) {
      controls.locked_sm_min_mhz = sclk->first;
      controls.locked_sm_max_mhz = sclk->second;
    }
    if (const auto mclk = enabled_range(device.mclk_levels_mhz(), device.mclk_mask)) {
      controls.locked_mem_min_mhz = mclk->first;
      controls.locked_mem_max_mhz = mclk->second;
    }
  }
  controls.power_limit_w = device.power_cap_w;
  device.gpu->load_controls(controls);
}

std::unique_ptr<State> build_state() {
  auto built = std::make_unique<State>();
  built->setters_no_permission = flag("DVFSLAB_FAKE_ROCM_NO_PERMISSION");
  built->log_path = environment("DVFSLAB_FAKE_ROCM_LOG");
  built->state_path = environment("DVFSLAB_FAKE_ROCM_STATE");
  std::string models = environment("DVFSLAB_FAKE_ROCM_GPUS");
  if (models.empty()) models = "mi300x";
  // dvfslab's GPU lock is machine-wide per unique id: tests running in parallel
  // give their fakes different ids through this salt.
  const std::string salt = environment("DVFSLAB_FAKE_ROCM_UUID_SALT");
  std::stringstream list(models);
  for (std::string model; std::getline(list, model, ',');) {
    FakeDevice device;
    device.index = static_cast<int>(built->devices.size());
    device.gpu = std::make_unique<SimGpu>(sim_gpu_spec(model), SimTimeMode::wall_time, device.index);
    device.unique_id = std::hash<std::string>{}(fmt::format("{}/{}/{}", salt, model, device.index));
    device.pci_id = static_cast<std::uint64_t>(0x18 + 0x10 * device.index) << 8;
    device.sclk_mask = every_level(device.sclk_levels_mhz().size());
    device.mclk_mask = every_level(device.mclk_levels_mhz().size());
    device.power_cap_w = device.gpu->spec().power_limit_default_w;
    built->devices.push_back(std::move(device));
  }
  load_state(*built);
  for (FakeDevice& device : built->devices) apply_controls(device);
  save_state(*built);
  return built;
}

std::vector<int> ascending(std::vector<int> levels) {
  std::sort(levels.begin(), levels.end());
  return levels;
}

}  // namespace

std::vector<int> FakeDevice::sclk_levels_mhz() const { return ascending(gpu->spec().graphics_mhz.front()); }

std::vector<int> FakeDevice::mclk_levels_mhz() const { return ascending(gpu->spec().memory_mhz); }

std::mutex& state_mutex() {
  static std::mutex mutex;
  return mutex;
}

rocm::Status initialise() {
  if (flag("DVFSLAB_FAKE_ROCM_NO_DRIVER")) {
    // As the real library does without the amdgpu driver: it says why on stderr.
    std::fputs("Failed to open drm root directory /sys/class/drm.: No such file or directory\n", stderr);
    return rocm::status_init_error;
  }
  if (init_count++ > 0) return rocm::success;
  try {
    current = build_state();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake ROCm SMI: %s\n", e.what());
    init_count = 0;
    return rocm::status_init_error;
  }
  return rocm::success;
}

rocm::Status shut_down() {
  if (init_count == 0) return rocm::status_init_error;
  if (--init_count == 0) current.reset();
  return rocm::success;
}

State* state() { return current.get(); }

void log_setter_call(const std::string& line) {
  if (current == nullptr || current->log_path.empty()) return;
  std::ofstream(current->log_path, std::ios::app) << line << '\n';
}

void apply_and_save(FakeDevice& device) {
  apply_controls(device);
  save_state(*current);
}

}  // namespace dvfslab::fake_rocm
