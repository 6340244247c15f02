#pragma once
// Loading a vendor's management library at run time (NVML, ROCm SMI): the build
// needs no vendor package, and a machine without the driver gets one clear error.
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
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

// The instance of `Library` every caller shares while any holds it, made by `load`
// when none is alive. A vendor library is initialised once per process however
// many GPUs are open, and shut down when the last is closed. `load` runs under a
// lock, so two threads opening GPUs at once cannot initialise it twice; what it
// throws reaches the caller and leaves no instance behind. `load` is a
// std::function so that the instance is one per `Library`, not one per caller.
template <class Library>
std::shared_ptr<Library> shared_vendor_library(const std::function<std::shared_ptr<Library>()>& load) {
  static std::mutex mutex;
  static std::weak_ptr<Library> shared;
  std::lock_guard lock(mutex);
  if (auto existing = shared.lock()) return existing;
  std::shared_ptr<Library> library = load();
  shared = library;
  return library;
}

}  // namespace dvfslab
