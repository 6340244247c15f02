// The backend table: which backend a --device spec selects, what `auto` finds,
// and the --device help every command shows. Adding a backend to dvfslab is one
// row here; a host program adds its own with register_gpu_backend
// (docs/gpu-backends.md).
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <iterator>
#include <optional>
#include <string_view>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/gpu_backends.hpp"
#include "dvfslab/replay.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/twin.hpp"
#include "gpu/device_list.hpp"
#include "gpu/nvml/nvml_devices.hpp"
#include "gpu/nvml/visible_devices.hpp"
#include "gpu/rocm/rocm_devices.hpp"
#include "gpu/sim/sim_node.hpp"

namespace dvfslab {
namespace {

using GpuList = std::vector<std::unique_ptr<Gpu>>;

GpuList one(std::unique_ptr<Gpu> gpu) {
  GpuList gpus;
  gpus.push_back(std::move(gpu));
  return gpus;
}

GpuList open_nvml(std::string_view selector, const OpenOptions& options) {
  if (const auto range = parse_index_range(selector)) {
    return nvml::open_nvml_range(selector, range->first, range->last, options.library("nvml"));
  }
  return one(nvml::open_nvml_gpu(selector, options.library("nvml")));
}

// Every NVIDIA GPU, or those the job's visible-devices variable lists.
GpuList find_nvml(const OpenOptions& options) {
  GpuList all = nvml::open_all_nvml_gpus(options.library("nvml"));
  if (!options.visible_devices) return all;
  std::vector<GpuIdentity> identities;
  for (const auto& gpu : all) identities.push_back(gpu->identity());
  const auto positions = nvml::visible_gpu_positions(*options.visible_devices, identities);
  if (!positions) return all;
  GpuList visible;
  for (const std::size_t position : *positions) visible.push_back(std::move(all[position]));
  return visible;
}

std::string nvml_spec_help() {
  return "an NVIDIA GPU's index (0), UUID (GPU-...) or PCI bus id (0000:3b:00.0)";
}

GpuList open_rocm(std::string_view selector, const OpenOptions& options) {
  return rocm::open_rocm_gpus(selector, options.library("rocm"));
}

GpuList find_rocm(const OpenOptions& options) { return rocm::open_all_rocm_gpus(options.library("rocm")); }

std::string rocm_spec_help() {
  return "amd:INDEX, amd:AMD-UNIQUEID or amd:PCI-BUS-ID for an AMD GPU through ROCm SMI (docs/gpu-backends.md)";
}

GpuList open_simulated(std::string_view names, const OpenOptions& options) {
  return sim::open_simulated_node(names, options.sim_time);
}

std::string simulated_spec_help() {
  std::string keys;
  for (const std::string& key : sim_gpu_keys())
    keys += fmt::format("{}sim:{}", keys.empty() ? "" : ", ", key);
  return fmt::format("sim:NAME for a simulated GPU ({}), sim:NAMExN for N of them on one node (sim:h200x8)",
                     keys);
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

// Prefixed backends first; the unprefixed one last (it takes every other spec).
std::vector<GpuBackendDefinition>& backends() {
  static std::vector<GpuBackendDefinition> table = {
      {"sim", "sim:", open_simulated, {}, "sim:NAME", simulated_spec_help, "", ""},
      {"replay", "replay:", open_replayed, {}, "replay:FILE.csv", replay_spec_help, "", ""},
      {"twin", "twin:", open_twin, {}, "twin:FILE.csv", twin_spec_help, "", ""},
      {"rocm", "amd:", open_rocm, find_rocm, "amd:INDEX", rocm_spec_help, "rocm_library", "DVFSLAB_ROCM_LIBRARY"},
      {"nvml", "", open_nvml, find_nvml, "a GPU index, UUID or PCI bus id", nvml_spec_help, "nvml_library",
       "DVFSLAB_NVML_LIBRARY"},
  };
  return table;
}

// Why `candidate` cannot join the table, or "" when it can.
std::string registration_problem(const GpuBackendDefinition& candidate) {
  if (candidate.name.empty()) return "its name is empty";
  if (!candidate.prefix.ends_with(':') || candidate.prefix.size() < 2)
    return fmt::format("its prefix '{}' is not a word ending in ':' (e.g. 'mygpu:')", candidate.prefix);
  if (!candidate.open) return "it has no open function";
  if (!candidate.spec_help || candidate.spec_summary.empty()) return "it has no --device help";
  if (candidate.library_keyword.empty() != candidate.library_variable.empty())
    return "it names only one of its library keyword and environment variable";
  for (const GpuBackendDefinition& existing : backends()) {
    if (existing.name == candidate.name)
      return fmt::format("the name '{}' is registered already", candidate.name);
    if (!existing.prefix.empty() &&
        (existing.prefix.starts_with(candidate.prefix) || candidate.prefix.starts_with(existing.prefix)))
      return fmt::format("its prefix '{}' overlaps the {} backend's '{}'", candidate.prefix, existing.name,
                         existing.prefix);
  }
  return "";
}

// The backends in the order the help lists them: the unprefixed one first.
std::vector<const GpuBackendDefinition*> backends_for_help() {
  std::vector<const GpuBackendDefinition*> ordered;
  for (const GpuBackendDefinition& backend : backends()) {
    if (backend.prefix.empty()) ordered.push_back(&backend);
  }
  for (const GpuBackendDefinition& backend : backends()) {
    if (!backend.prefix.empty()) ordered.push_back(&backend);
  }
  return ordered;
}

// "auto (...), <the unprefixed backend's forms>, <each prefixed backend's form>,
// lists and ranges".
std::string device_spec_forms() {
  std::string forms =
      "auto or all (every GPU found, e.g. the NVIDIA GPUs, only those CUDA_VISIBLE_DEVICES lists where it "
      "is set; a command that uses one GPU takes the first with auto)";
  for (const GpuBackendDefinition* backend : backends_for_help()) forms += ", " + backend->spec_help();
  return forms + "; several GPUs as a list or a range of indices (0,1,2,3 or 0-3 or sim:h200,sim:v100)";
}

// `auto`: every GPU of every backend that finds GPUs by itself. A backend without
// its driver is skipped; when no backend finds any GPU, the first one's reason is
// the error.
GpuList find_all_gpus(const OpenOptions& options) {
  GpuList found;
  std::exception_ptr first_failure;
  // The unprefixed backend (NVML) first: its GPUs lead `auto` and its reason is
  // the one given when no backend finds a GPU.
  for (const GpuBackendDefinition* backend : backends_for_help()) {
    if (!backend->find_all) continue;
    try {
      for (auto& gpu : backend->find_all(options)) found.push_back(std::move(gpu));
    } catch (const DriverNotFoundError&) {
      if (!first_failure) first_failure = std::current_exception();
    }
  }
  if (found.empty() && first_failure) std::rethrow_exception(first_failure);
  if (found.empty()) throw DriverNotFoundError("no GPU found; give --device one of: " + device_spec_forms());
  return found;
}

// The spec of one item of a --device list: `auto`, `all` or one backend's.
GpuList open_item(const std::string& spec, const OpenOptions& options) {
  if (spec == "auto" || spec == "all") return find_all_gpus(options);
  for (const GpuBackendDefinition& backend : backends()) {
    if (spec.starts_with(backend.prefix)) {
      return backend.open(std::string_view(spec).substr(backend.prefix.size()), options);
    }
  }
  throw UsageError(fmt::format("--device {}: not a device spec; give one of: {}", spec, device_spec_forms()));
}

std::vector<std::string> backend_prefixes() {
  std::vector<std::string> prefixes;
  for (const GpuBackendDefinition& backend : backends()) prefixes.push_back(backend.prefix);
  return prefixes;
}

void refuse_gpus_named_twice(const std::string& spec, const GpuList& gpus) {
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const GpuIdentity& identity = gpus[i]->identity();
    for (std::size_t j = 0; j < i; ++j) {
      if (!identity.uuid.empty() && gpus[j]->identity().uuid == identity.uuid) {
        throw UsageError(fmt::format("--device {}: GPU {} ({}, {}) is named twice; name each GPU once", spec,
                                     identity.index, identity.name, identity.uuid));
      }
    }
  }
}

// The items of a list in order, except that the simulated ones open together,
// on one clock, where the first of them stands.
GpuList open_list(const std::string& spec, const std::vector<std::string>& items,
                  const OpenOptions& options) {
  constexpr std::string_view simulated_prefix = "sim:";
  GpuList gpus;
  std::string simulated_names;
  std::optional<std::size_t> simulated_place;
  for (const std::string& item : items) {
    if (item.starts_with(simulated_prefix)) {
      if (simulated_place) simulated_names += ',';
      simulated_names += item.substr(simulated_prefix.size());
      if (!simulated_place) simulated_place = gpus.size();
      continue;
    }
    for (auto& gpu : open_item(item, options)) gpus.push_back(std::move(gpu));
  }
  if (simulated_place) {
    GpuList simulated = open_simulated(simulated_names, options);
    gpus.insert(gpus.begin() + static_cast<std::ptrdiff_t>(*simulated_place),
                std::make_move_iterator(simulated.begin()), std::make_move_iterator(simulated.end()));
  }
  refuse_gpus_named_twice(spec, gpus);
  return gpus;
}

GpuControlRoute& control_route() {
  static GpuControlRoute route;
  return route;
}

GpuList open_by_spec(const std::string& spec, const OpenOptions& options) {
  if (spec.empty()) throw UsageError("--device is empty; give one of: " + device_spec_forms());
  const std::vector<std::string> items = split_device_list(spec, backend_prefixes());
  if (items.size() == 1) return open_item(spec, options);
  return open_list(spec, items, options);
}

}  // namespace

std::string device_spec_help() { return "Which GPU: " + device_spec_forms(); }

std::string device_spec_summary() {
  std::string summary = "auto";
  const std::vector<const GpuBackendDefinition*> ordered = backends_for_help();
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    summary += fmt::format("{}{}", i + 1 == ordered.size() ? " or " : ", ", ordered[i]->spec_summary);
  }
  return summary;
}

std::filesystem::path OpenOptions::library(const std::string& backend) const {
  const auto it = libraries.find(backend);
  return it == libraries.end() ? std::filesystem::path() : it->second;
}

std::vector<BackendLibraryOption> backend_library_options() {
  std::vector<BackendLibraryOption> options;
  for (const GpuBackendDefinition& backend : backends()) {
    if (backend.library_keyword.empty()) continue;
    options.push_back({backend.name, backend.library_keyword, backend.library_variable});
  }
  return options;
}

void register_gpu_backend(GpuBackendDefinition backend) {
  if (const std::string problem = registration_problem(backend); !problem.empty()) {
    throw ConfigError(fmt::format("GPU backend '{}' cannot be registered: {}", backend.name, problem));
  }
  std::vector<GpuBackendDefinition>& table = backends();
  // Before the unprefixed row, which would otherwise take the new prefix's specs.
  const auto unprefixed = std::find_if(table.begin(), table.end(),
                                       [](const GpuBackendDefinition& row) { return row.prefix.empty(); });
  table.insert(unprefixed, std::move(backend));
}

void set_gpu_control_route(GpuControlRoute route) { control_route() = std::move(route); }

std::vector<std::unique_ptr<Gpu>> open_gpus(const std::string& spec, const OpenOptions& options) {
  GpuList gpus = open_by_spec(spec, options);
  for (auto& gpu : gpus) {
    gpu->set_read_only(options.read_only);
    if (control_route() && gpu->persists_settings()) gpu = control_route()(std::move(gpu));
  }
  return gpus;
}

std::unique_ptr<Gpu> open_gpu(const std::string& spec, const OpenOptions& options) {
  auto gpus = open_gpus(spec, options);
  if (gpus.size() > 1 && spec != "auto") {
    throw UsageError(
        fmt::format("--device {} names {} GPUs, and this command uses one: name one of them (e.g. "
                    "--device {})",
                    spec, gpus.size(), gpus.front()->identity().device_spec));
  }
  return std::move(gpus.front());
}

}  // namespace dvfslab
