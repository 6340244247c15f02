// The backend table: which backend a --device spec selects, what `auto` finds,
// and the --device help every command shows. Adding a backend is one line here
// (docs/gpu-backends.md).
#include <fmt/format.h>

#include <exception>
#include <string_view>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/replay.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/twin.hpp"
#include "gpu/nvml/nvml_devices.hpp"

namespace dvfslab {
namespace {

using GpuList = std::vector<std::unique_ptr<Gpu>>;

struct GpuBackend {
  // "sim:" in "sim:h200". Empty for the one backend that takes every spec without
  // a known prefix (NVML: an index, UUID or PCI bus id).
  std::string_view prefix;
  // Opens what the text after the prefix names.
  GpuList (*open)(std::string_view argument, const OpenOptions& options);
  // Every GPU the backend finds by itself, for `auto`; nullptr for backends whose
  // GPUs exist only when named. Throws DriverNotFoundError when it has no driver.
  GpuList (*find_all)(const OpenOptions& options);
  // How --device names this backend's GPUs, for the help text.
  std::string (*spec_help)();
};

GpuList one(std::unique_ptr<Gpu> gpu) {
  GpuList gpus;
  gpus.push_back(std::move(gpu));
  return gpus;
}

GpuList open_nvml(std::string_view selector, const OpenOptions& options) {
  return one(nvml::open_nvml_gpu(selector, options.nvml_library));
}

GpuList find_nvml(const OpenOptions& options) { return nvml::open_all_nvml_gpus(options.nvml_library); }

std::string nvml_spec_help() {
  return "an NVIDIA GPU's index (0), UUID (GPU-...) or PCI bus id (0000:3b:00.0)";
}

GpuList open_simulated(std::string_view name, const OpenOptions& options) {
  return one(std::make_unique<SimGpu>(sim_gpu_spec(name), options.sim_time));
}

std::string simulated_spec_help() {
  std::string keys;
  for (const std::string& key : sim_gpu_keys())
    keys += fmt::format("{}sim:{}", keys.empty() ? "" : ", ", key);
  return fmt::format("sim:NAME for a simulated GPU ({})", keys);
}

GpuList open_replayed(std::string_view table, const OpenOptions& /*options*/) {
  return one(open_replay_gpu(table));
}

std::string replay_spec_help() {
  return "replay:FILE.csv to answer from a published sweep table (docs/replay.md)";
}

GpuList open_twin(std::string_view spec, const OpenOptions& /*options*/) { return one(open_twin_gpu(spec)); }

std::string twin_spec_help() {
  return "twin:FILE.csv[#GPU NAME][@noise=1%,seed=7] for a simulated GPU that behaves like the table's, "
         "with a sensor and seeded noise (docs/twins.md)";
}

// Prefixed backends first; the unprefixed one last.
const GpuBackend backends[] = {
    {"sim:", open_simulated, nullptr, simulated_spec_help},
    {"replay:", open_replayed, nullptr, replay_spec_help},
    {"twin:", open_twin, nullptr, twin_spec_help},
    {"", open_nvml, find_nvml, nvml_spec_help},
};

// "auto (...), <the unprefixed backend's forms>, <each prefixed backend's form>".
std::string device_spec_forms() {
  std::string forms =
      "auto (every GPU found, e.g. the NVIDIA GPUs; a command that uses one GPU takes the first)";
  for (const GpuBackend& backend : backends) {
    if (backend.prefix.empty()) forms += ", " + backend.spec_help();
  }
  for (const GpuBackend& backend : backends) {
    if (!backend.prefix.empty()) forms += ", " + backend.spec_help();
  }
  return forms;
}

// `auto`: every GPU of every backend that finds GPUs by itself. A backend without
// its driver is skipped; when no backend finds any GPU, the first one's reason is
// the error.
GpuList find_all_gpus(const OpenOptions& options) {
  GpuList found;
  std::exception_ptr first_failure;
  for (const GpuBackend& backend : backends) {
    if (backend.find_all == nullptr) continue;
    try {
      for (auto& gpu : backend.find_all(options)) found.push_back(std::move(gpu));
    } catch (const DriverNotFoundError&) {
      if (!first_failure) first_failure = std::current_exception();
    }
  }
  if (found.empty() && first_failure) std::rethrow_exception(first_failure);
  if (found.empty()) throw DriverNotFoundError("no GPU found; give --device one of: " + device_spec_forms());
  return found;
}

GpuList open_by_spec(const std::string& spec, const OpenOptions& options) {
  if (spec.empty()) throw UsageError("--device is empty; give one of: " + device_spec_forms());
  if (spec == "auto") return find_all_gpus(options);
  for (const GpuBackend& backend : backends) {
    if (spec.starts_with(backend.prefix)) {
      return backend.open(std::string_view(spec).substr(backend.prefix.size()), options);
    }
  }
  throw UsageError(fmt::format("--device {}: not a device spec; give one of: {}", spec, device_spec_forms()));
}

}  // namespace

std::string device_spec_help() { return "Which GPU: " + device_spec_forms(); }

std::vector<std::unique_ptr<Gpu>> open_gpus(const std::string& spec, const OpenOptions& options) {
  GpuList gpus = open_by_spec(spec, options);
  for (auto& gpu : gpus) gpu->set_read_only(options.read_only);
  return gpus;
}

std::unique_ptr<Gpu> open_gpu(const std::string& spec, const OpenOptions& options) {
  auto gpus = open_gpus(spec, options);
  return std::move(gpus.front());
}

}  // namespace dvfslab
