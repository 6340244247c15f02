#pragma once
// Finding NVIDIA GPUs: every one, or the one an index, UUID or PCI bus id names.
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "dvfslab/gpu.hpp"

namespace dvfslab::nvml {

// Every GPU NVML enumerates, in its order. Throws DriverNotFoundError without a
// driver, and when the driver sees no GPU.
std::vector<std::unique_ptr<Gpu>> open_all_nvml_gpus(const std::filesystem::path& library_path = {});

// The GPU `selector` names: an index ("0"), a UUID ("GPU-8f...", the "GPU-" prefix
// optional, any case) or a PCI bus id ("0000:3b:00.0", "00000000:3B:00.0",
// "3b:00.0"). Throws ConfigError listing the GPUs when none matches.
std::unique_ptr<Gpu> open_nvml_gpu(std::string_view selector, const std::filesystem::path& library_path = {});

// GPUs first..last of NVML's enumeration; `selector` is the range as written
// ("0-3"). Throws ConfigError naming the GPUs present when it reaches beyond them.
std::vector<std::unique_ptr<Gpu>> open_nvml_range(std::string_view selector, unsigned first, unsigned last,
                                                  const std::filesystem::path& library_path = {});

struct PciAddress {
  unsigned domain = 0;
  unsigned bus = 0;
  unsigned device = 0;
  unsigned function = 0;
  bool operator==(const PciAddress&) const = default;
};
// Parses "[domain:]bus:device.function" in hex, any case, any domain width.
std::optional<PciAddress> parse_pci_bus_id(std::string_view text);
// Whether `selector` names the GPU with this identity (index, UUID or PCI bus id).
bool selector_matches(std::string_view selector, const GpuIdentity& identity);

}  // namespace dvfslab::nvml
