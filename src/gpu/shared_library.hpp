#pragma once
// Loading a vendor's management library at run time (NVML, ROCm SMI): the build
// needs no vendor package, and a machine without the driver gets one clear error.
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace dvfslab {

// dlopen()s `configured`, or else the first of `default_names` that loads. Returns
// the handle and the name it was loaded by. Throws DriverNotFoundError with
// `not_found_message(reasons)`, `reasons` being each candidate's dlerror() text.
std::pair<void*, std::string> open_vendor_library(
    const std::filesystem::path& configured, std::span<const std::string_view> default_names,
    const std::function<std::string(const std::string& reasons)>& not_found_message);

}  // namespace dvfslab
