#include "gpu/nvml/visible_devices.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <numeric>
#include <string>
#include <string_view>
#include <tuple>

#include "dvfslab/error.hpp"
#include "gpu/nvml/nvml_devices.hpp"

namespace dvfslab::nvml {
namespace {

std::string lowercase(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return result;
}

std::string_view trimmed(std::string_view text) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> entries_of(std::string_view list) {
  std::vector<std::string_view> entries;
  std::size_t begin = 0;
  while (begin <= list.size()) {
    const std::size_t comma = std::min(list.find(',', begin), list.size());
    entries.push_back(trimmed(list.substr(begin, comma - begin)));
    begin = comma + 1;
  }
  return entries;
}

std::optional<long> integer_of(std::string_view entry) {
  long value = 0;
  const auto [end, error] = std::from_chars(entry.data(), entry.data() + entry.size(), value);
  if (entry.empty() || error != std::errc() || end != entry.data() + entry.size()) return std::nullopt;
  return value;
}

// Reads each entry of one variable against this node's GPUs.
class Resolver {
 public:
  Resolver(const VisibleDevices& visible, const std::vector<GpuIdentity>& gpus)
      : visible_(visible), gpus_(gpus) {}

  std::vector<std::size_t> resolve() {
    if (trimmed(visible_.list).empty()) throw refusal("it is empty, which leaves the job no GPU");
    std::vector<std::size_t> positions;
    for (std::string_view entry : entries_of(visible_.list)) {
      const std::optional<long> index = integer_of(entry);
      if (index && *index < 0) break;  // CUDA's way of hiding the GPUs from here on
      const std::size_t position = index ? by_cuda_index(entry, *index) : by_identity(entry);
      if (std::find(positions.begin(), positions.end(), position) != positions.end()) {
        throw refusal(
            fmt::format("GPU {} ({}) is listed twice", gpus_[position].index, gpus_[position].uuid));
      }
      positions.push_back(position);
    }
    if (positions.empty()) throw refusal("it leaves the job no GPU");
    return positions;
  }

 private:
  ConfigError refusal(const std::string& why) const {
    std::string here;
    for (const GpuIdentity& gpu : gpus_) {
      here += fmt::format("{}{} {} {} {}", here.empty() ? "" : "; ", gpu.index, gpu.name, gpu.uuid,
                          gpu.pci_bus_id);
    }
    return ConfigError(fmt::format("{}={}: {} (GPUs here: {}); name the GPUs by UUID, or unset {}",
                                   visible_.variable, visible_.list, why, here, visible_.variable));
  }

  // CUDA's index counts GPUs in PCI bus order; its default order (fastest first)
  // is the same only where every GPU is of one model.
  std::size_t by_cuda_index(std::string_view entry, long index) const {
    const bool one_model = std::all_of(
        gpus_.begin(), gpus_.end(), [&](const GpuIdentity& gpu) { return gpu.name == gpus_.front().name; });
    if (!one_model && !visible_.pci_bus_order) {
      throw refusal(fmt::format(
          "index {} is CUDA's, which counts the fastest GPU first on a node of several models; set "
          "CUDA_DEVICE_ORDER=PCI_BUS_ID",
          entry));
    }
    std::vector<std::size_t> by_bus(gpus_.size());
    std::iota(by_bus.begin(), by_bus.end(), std::size_t{0});
    std::stable_sort(by_bus.begin(), by_bus.end(), [&](std::size_t a, std::size_t b) {
      const auto bus_a = parse_pci_bus_id(gpus_[a].pci_bus_id);
      const auto bus_b = parse_pci_bus_id(gpus_[b].pci_bus_id);
      if (!bus_a || !bus_b) return false;
      return std::tie(bus_a->domain, bus_a->bus, bus_a->device, bus_a->function) <
             std::tie(bus_b->domain, bus_b->bus, bus_b->device, bus_b->function);
    });
    if (static_cast<std::size_t>(index) >= by_bus.size()) {
      throw refusal(fmt::format("there is no GPU {} (this node has {})", entry, gpus_.size()));
    }
    return by_bus[static_cast<std::size_t>(index)];
  }

  // A UUID (GPU-..., or a unique beginning of one, as CUDA accepts) or a PCI bus id.
  std::size_t by_identity(std::string_view entry) const {
    const std::string wanted = lowercase(entry);
    if (wanted.starts_with("mig-")) {
      throw refusal(fmt::format("{} is a MIG instance, and dvfslab measures and controls whole GPUs", entry));
    }
    const auto pci = parse_pci_bus_id(entry);
    std::vector<std::size_t> matches;
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      const bool same_bus = pci && parse_pci_bus_id(gpus_[i].pci_bus_id) == pci;
      const bool uuid_begins = wanted.starts_with("gpu-") && lowercase(gpus_[i].uuid).starts_with(wanted);
      if (same_bus || uuid_begins) matches.push_back(i);
    }
    if (matches.empty()) throw refusal(fmt::format("'{}' names none of this node's GPUs", entry));
    if (matches.size() > 1)
      throw refusal(fmt::format("'{}' begins the UUID of {} GPUs", entry, matches.size()));
    return matches.front();
  }

  const VisibleDevices& visible_;
  const std::vector<GpuIdentity>& gpus_;
};

// NVIDIA_VISIBLE_DEVICES is the container runtime's: its keywords and host
// indices have been applied before this process started.
bool applied_by_container_runtime(const VisibleDevices& visible) {
  if (visible.variable != "NVIDIA_VISIBLE_DEVICES") return false;
  const std::string value = lowercase(trimmed(visible.list));
  if (value.empty() || value == "all" || value == "none" || value == "void") return true;
  const std::vector<std::string_view> entries = entries_of(value);
  return std::any_of(entries.begin(), entries.end(),
                     [](std::string_view entry) { return integer_of(entry).has_value(); });
}

}  // namespace

std::optional<std::vector<std::size_t>> visible_gpu_positions(const VisibleDevices& visible,
                                                              const std::vector<GpuIdentity>& gpus) {
  if (applied_by_container_runtime(visible)) return std::nullopt;
  return Resolver(visible, gpus).resolve();
}

}  // namespace dvfslab::nvml
