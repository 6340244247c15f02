#include "gpu/nvml/nvml_devices.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "dvfslab/error.hpp"
#include "gpu/nvml/nvml_errors.hpp"
#include "gpu/nvml/nvml_gpu.hpp"
#include "gpu/nvml/nvml_library.hpp"

namespace dvfslab::nvml {
namespace {

std::optional<unsigned> parse_hex(std::string_view text) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool is_index(std::string_view text) {
  return !text.empty() && text.size() < 6 &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string lowercase(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return result;
}

std::string without_gpu_prefix(std::string_view uuid) {
  std::string text = lowercase(uuid);
  if (text.starts_with("gpu-")) text.erase(0, 4);
  return text;
}

unsigned device_count(Library& library) {
  unsigned count = 0;
  constexpr std::string_view action = "count the NVIDIA GPUs";
  const Return code = library.get<Entry::device_get_count>(action)(&count);
  if (code != success) {
    throw_error(code, Failure{"NVML",
                              std::string(action),
                              library.symbol_name(Entry::device_get_count),
                              library.describe(code),
                              {}});
  }
  if (count == 0) {
    throw DriverNotFoundError("the NVIDIA driver is loaded but sees no GPU");
  }
  return count;
}

std::unique_ptr<Gpu> open_index(const std::shared_ptr<Library>& library, unsigned index) {
  Device device = nullptr;
  const std::string action = fmt::format("open GPU {}", index);
  const Return code = library->get<Entry::device_get_handle_by_index>(action)(index, &device);
  if (code != success) {
    throw_error(code, Failure{fmt::format("GPU {}", index),
                              action,
                              library->symbol_name(Entry::device_get_handle_by_index),
                              library->describe(code),
                              {}});
  }
  return std::make_unique<NvmlGpu>(library, device, static_cast<int>(index));
}

}  // namespace

std::optional<PciAddress> parse_pci_bus_id(std::string_view text) {
  const auto dot = text.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto function = parse_hex(text.substr(dot + 1));
  std::string_view rest = text.substr(0, dot);
  const auto last_colon = rest.rfind(':');
  if (last_colon == std::string_view::npos) return std::nullopt;
  const auto device = parse_hex(rest.substr(last_colon + 1));
  rest = rest.substr(0, last_colon);
  const auto bus_colon = rest.rfind(':');
  const auto bus = parse_hex(bus_colon == std::string_view::npos ? rest : rest.substr(bus_colon + 1));
  const auto domain =
      bus_colon == std::string_view::npos ? std::optional<unsigned>(0) : parse_hex(rest.substr(0, bus_colon));
  if (!function || !device || !bus || !domain) return std::nullopt;
  return PciAddress{*domain, *bus, *device, *function};
}

bool selector_matches(std::string_view selector, const GpuIdentity& identity) {
  if (is_index(selector)) return std::stoi(std::string(selector)) == identity.index;
  if (const auto wanted = parse_pci_bus_id(selector)) {
    const auto actual = parse_pci_bus_id(identity.pci_bus_id);
    if (actual && *actual == *wanted) return true;
  }
  return !identity.uuid.empty() && without_gpu_prefix(selector) == without_gpu_prefix(identity.uuid);
}

std::vector<std::unique_ptr<Gpu>> open_all_nvml_gpus(const std::filesystem::path& library_path) {
  const auto library = Library::acquire(library_path);
  const unsigned count = device_count(*library);
  std::vector<std::unique_ptr<Gpu>> gpus;
  for (unsigned index = 0; index < count; ++index) gpus.push_back(open_index(library, index));
  return gpus;
}

std::vector<std::unique_ptr<Gpu>> open_nvml_range(std::string_view selector, unsigned first, unsigned last,
                                                  const std::filesystem::path& library_path) {
  const auto library = Library::acquire(library_path);
  const unsigned count = device_count(*library);
  if (last >= count) {
    throw ConfigError(
        fmt::format("--device {}: this machine has {} NVIDIA GPU{} (0–{}); give a range within them",
                    selector, count, count == 1 ? "" : "s", count - 1));
  }
  std::vector<std::unique_ptr<Gpu>> gpus;
  for (unsigned index = first; index <= last; ++index) gpus.push_back(open_index(library, index));
  return gpus;
}

std::unique_ptr<Gpu> open_nvml_gpu(std::string_view selector, const std::filesystem::path& library_path) {
  const auto library = Library::acquire(library_path);
  const unsigned count = device_count(*library);
  if (is_index(selector)) {
    const unsigned index = static_cast<unsigned>(std::stoul(std::string(selector)));
    if (index >= count) {
      throw ConfigError(
          fmt::format("--device {}: there is no GPU {}; this machine has {} NVIDIA GPU{} (0–{})", selector,
                      index, count, count == 1 ? "" : "s", count - 1));
    }
    return open_index(library, index);
  }
  std::string known;
  for (unsigned index = 0; index < count; ++index) {
    auto gpu = open_index(library, index);
    if (selector_matches(selector, gpu->identity())) return gpu;
    const GpuIdentity& identity = gpu->identity();
    known += fmt::format("{}{} {} {} {}", known.empty() ? "" : "; ", identity.index, identity.name,
                         identity.uuid, identity.pci_bus_id);
  }
  throw ConfigError(fmt::format(
      "--device {}: no NVIDIA GPU has this index, UUID or PCI bus id (GPUs here: {}); use one of them, "
      "auto, or sim:NAME for a simulated GPU",
      selector, known));
}

}  // namespace dvfslab::nvml
