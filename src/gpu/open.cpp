// open_gpu / open_gpus: a prefix table picks the backend ("sim:", ...); anything
// else names NVIDIA GPUs ("auto", an index, a UUID or a PCI bus id).
#include <fmt/format.h>

#include <array>
#include <string_view>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/replay.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "gpu/nvml/nvml_devices.hpp"

namespace dvfslab {
namespace {

using BackendOpener = std::vector<std::unique_ptr<Gpu>> (*)(std::string_view argument, const OpenOptions& options);

std::vector<std::unique_ptr<Gpu>> open_simulated(std::string_view name, const OpenOptions& options) {
  std::vector<std::unique_ptr<Gpu>> gpus;
  gpus.push_back(std::make_unique<SimGpu>(sim_gpu_spec(name), options.sim_time));
  return gpus;
}

std::vector<std::unique_ptr<Gpu>> open_replayed(std::string_view table, const OpenOptions& /*options*/) {
  std::vector<std::unique_ptr<Gpu>> gpus;
  gpus.push_back(open_replay_gpu(table));
  return gpus;
}

struct Backend {
  std::string_view prefix;  // "sim:" in "sim:h200"
  BackendOpener open;       // gets the text after the prefix
};

// One entry per backend that a --device prefix selects.
constexpr std::array backends = {
    Backend{"sim:", open_simulated},
    Backend{"replay:", open_replayed},
};

}  // namespace

namespace {

std::vector<std::unique_ptr<Gpu>> open_by_spec(const std::string& spec, const OpenOptions& options) {
  for (const Backend& backend : backends) {
    if (spec.starts_with(backend.prefix)) return backend.open(std::string_view(spec).substr(backend.prefix.size()), options);
  }
  if (spec.empty()) {
    throw UsageError("--device is empty: give auto, a GPU index, UUID or PCI bus id, sim:NAME or replay:FILE.csv");
  }
  if (spec == "auto") return nvml::open_all_nvml_gpus(options.nvml_library);
  std::vector<std::unique_ptr<Gpu>> gpus;
  gpus.push_back(nvml::open_nvml_gpu(spec, options.nvml_library));
  return gpus;
}

}  // namespace

std::vector<std::unique_ptr<Gpu>> open_gpus(const std::string& spec, const OpenOptions& options) {
  auto gpus = open_by_spec(spec, options);
  for (auto& gpu : gpus) gpu->set_read_only(options.read_only);
  return gpus;
}

std::unique_ptr<Gpu> open_gpu(const std::string& spec, const OpenOptions& options) {
  auto gpus = open_gpus(spec, options);
  return std::move(gpus.front());
}

}  // namespace dvfslab
