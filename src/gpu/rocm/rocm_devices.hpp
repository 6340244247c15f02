#pragma once
// Finding AMD GPUs: every one ROCm SMI monitors, or those an `amd:` spec names.
#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "dvfslab/gpu.hpp"

namespace dvfslab::rocm {

// Every GPU ROCm SMI monitors, in its order. Throws DriverNotFoundError without
// the library or the driver, and when it sees no GPU.
std::vector<std::unique_ptr<Gpu>> open_all_rocm_gpus(const std::filesystem::path& library_path = {});

// What follows `amd:`: an index ("0"), a range ("0-3"), a unique id as dvfslab
// writes it ("AMD-00a1b2c3d4e5f607", any case) or a PCI bus id ("0000:03:00.0").
// Throws ConfigError listing the AMD GPUs when none matches.
std::vector<std::unique_ptr<Gpu>> open_rocm_gpus(std::string_view selector,
                                                 const std::filesystem::path& library_path = {});

}  // namespace dvfslab::rocm
