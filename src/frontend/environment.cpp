#include "dvfslab/frontend.hpp"

#include <cstdlib>
#include <optional>
#include <string_view>

#include "dvfslab/guard.hpp"

namespace dvfslab::frontend {
namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// CUDA_VISIBLE_DEVICES when set (an empty value too: CUDA then hides every GPU),
// else NVIDIA_VISIBLE_DEVICES.
std::optional<VisibleDevices> visible_devices_from_environment() {
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"}) {
    const char* value = std::getenv(name);
    if (value == nullptr) continue;
    return VisibleDevices{name, value, variable("CUDA_DEVICE_ORDER") == "PCI_BUS_ID"};
  }
  return std::nullopt;
}

}  // namespace

bool read_only_from_environment() {
  const std::string value = variable("DVFSLAB_READ_ONLY");
  return !value.empty() && value != "0";
}

OpenOptions open_options(SimTimeMode sim_time) {
  OpenOptions options;
  options.sim_time = sim_time;
  for (const BackendLibraryOption& library : backend_library_options()) {
    const std::string path = variable(library.environment_variable.c_str());
    if (!path.empty()) options.libraries[library.backend] = path;
  }
  options.read_only = read_only_from_environment();
  options.visible_devices = visible_devices_from_environment();
  return options;
}

std::filesystem::path state_dir(const std::string& given) {
  if (!given.empty()) return given;
  const std::string configured = variable("DVFSLAB_STATE_DIR");
  return configured.empty() ? default_state_dir() : std::filesystem::path(configured);
}

}  // namespace dvfslab::frontend
