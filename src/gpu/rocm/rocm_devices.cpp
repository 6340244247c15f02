#include "gpu/rocm/rocm_devices.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "dvfslab/error.hpp"
#include "gpu/device_list.hpp"
#include "gpu/nvml/nvml_devices.hpp"
#include "gpu/rocm/rocm_gpu.hpp"
#include "gpu/rocm/rocm_library.hpp"

namespace dvfslab::rocm {
namespace {

bool same_text_any_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(),
                    [](unsigned char x, unsigned char y) { return std::tolower(x) == std::tolower(y); });
}

bool matches(std::string_view selector, const GpuIdentity& identity) {
  if (same_text_any_case(selector, identity.uuid)) return true;
  const auto wanted = nvml::parse_pci_bus_id(selector);
  return wanted && wanted == nvml::parse_pci_bus_id(identity.pci_bus_id);
}

std::string gpus_here(const std::vector<std::unique_ptr<Gpu>>& gpus) {
  std::string known;
  for (const auto& gpu : gpus) {
    const GpuIdentity& identity = gpu->identity();
    known += fmt::format("{}amd:{} {} {} {}", known.empty() ? "" : "; ", identity.index, identity.name,
                         identity.uuid, identity.pci_bus_id);
  }
  return known;
}

}  // namespace

std::vector<std::unique_ptr<Gpu>> open_all_rocm_gpus(const std::filesystem::path& library_path) {
  const auto library = Library::acquire(library_path);
  std::vector<std::unique_ptr<Gpu>> gpus;
  for (std::uint32_t index = 0; index < library->device_count(); ++index) {
    gpus.push_back(std::make_unique<RocmGpu>(library, index));
  }
  return gpus;
}

std::vector<std::unique_ptr<Gpu>> open_rocm_gpus(std::string_view selector,
                                                 const std::filesystem::path& library_path) {
  std::vector<std::unique_ptr<Gpu>> all = open_all_rocm_gpus(library_path);
  const auto count = static_cast<unsigned>(all.size());
  const std::string whole(selector);
  const bool index =
      !selector.empty() && selector.size() < 6 &&
      std::all_of(selector.begin(), selector.end(), [](unsigned char c) { return std::isdigit(c); });
  const std::optional<IndexRange> range =
      index ? IndexRange{static_cast<unsigned>(std::stoul(whole)), static_cast<unsigned>(std::stoul(whole))}
            : parse_index_range(selector);
  std::vector<std::unique_ptr<Gpu>> chosen;
  if (range) {
    if (range->last >= count) {
      throw ConfigError(fmt::format("--device amd:{}: this machine has {} AMD GPU{} (amd:0–amd:{})", selector,
                                    count, count == 1 ? "" : "s", count - 1));
    }
    for (unsigned i = range->first; i <= range->last; ++i) chosen.push_back(std::move(all[i]));
    return chosen;
  }
  for (auto& gpu : all) {
    if (matches(selector, gpu->identity())) {
      chosen.push_back(std::move(gpu));
      return chosen;
    }
  }
  throw ConfigError(fmt::format(
      "--device amd:{}: no AMD GPU has this index, unique id or PCI bus id (GPUs here: {}); use one of them",
      selector, gpus_here(all)));
}

}  // namespace dvfslab::rocm
