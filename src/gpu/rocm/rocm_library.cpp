#include "gpu/rocm/rocm_library.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <span>
#include <utility>
#include <vector>

#include "dvfslab/error.hpp"
#include "gpu/rocm/rocm_errors.hpp"
#include "gpu/shared_library.hpp"

namespace dvfslab::rocm {
namespace {

#define DVFSLAB_ROCM_SYMBOLS(member, signature, ...) constexpr const char* member##_symbols[] = {__VA_ARGS__};
DVFSLAB_ROCM_ENTRY_POINTS(DVFSLAB_ROCM_SYMBOLS)
#undef DVFSLAB_ROCM_SYMBOLS

constexpr std::span<const char* const> entry_symbols[] = {
#define DVFSLAB_ROCM_INFO(member, signature, ...) member##_symbols,
    DVFSLAB_ROCM_ENTRY_POINTS(DVFSLAB_ROCM_INFO)
#undef DVFSLAB_ROCM_INFO
};
static_assert(std::size(entry_symbols) == entry_count);

constexpr std::string_view no_amd_gpu_advice =
    "install the amdgpu driver and ROCm, set DVFSLAB_ROCM_LIBRARY to librocm_smi64.so, or use --device "
    "sim:mi300x for a simulated AMD GPU";

std::pair<void*, std::string> open_library(const std::filesystem::path& configured) {
  return open_vendor_library(configured, default_library_names, [](const std::string& reasons) {
    return fmt::format("no AMD GPU found: could not load the ROCm SMI library ({}); {}", reasons,
                       no_amd_gpu_advice);
  });
}

// ROCm SMI's rsmi_init writes its complaints (no /sys/class/drm, no amdgpu) to
// stderr itself. dvfslab's errors are one line, so that text is captured and
// becomes part of the error instead. Opening a GPU happens before a command's
// threads start, so borrowing file descriptor 2 here is safe.
class CapturedStderr {
 public:
  CapturedStderr() {
    std::fflush(stderr);
    char name[] = "/tmp/dvfslab-rocm-init-XXXXXX";
    capture_ = mkstemp(name);
    if (capture_ < 0) return;
    unlink(name);
    saved_ = dup(STDERR_FILENO);
    if (saved_ >= 0) dup2(capture_, STDERR_FILENO);
  }
  // Restores stderr and returns what was written meanwhile, on one line.
  std::string release() {
    std::fflush(stderr);
    if (saved_ >= 0) {
      dup2(saved_, STDERR_FILENO);
      close(saved_);
      saved_ = -1;
    }
    std::string text;
    if (capture_ >= 0) {
      lseek(capture_, 0, SEEK_SET);
      char buffer[512];
      for (ssize_t n; (n = read(capture_, buffer, sizeof buffer)) > 0;)
        text.append(buffer, static_cast<std::size_t>(n));
      close(capture_);
      capture_ = -1;
    }
    for (char& c : text) {
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text;
  }
  ~CapturedStderr() { release(); }
  CapturedStderr(const CapturedStderr&) = delete;
  CapturedStderr& operator=(const CapturedStderr&) = delete;

 private:
  int capture_ = -1;
  int saved_ = -1;
};

}  // namespace

std::shared_ptr<Library> Library::acquire(const std::filesystem::path& path) {
  return shared_vendor_library<Library>([&] { return load(path); });
}

std::shared_ptr<Library> Library::load(const std::filesystem::path& path) {
  auto [handle, loaded] = open_library(path);
  std::shared_ptr<Library> library(new Library(handle, loaded));
  auto* init = library->find<Entry::init>();
  auto* count = library->find<Entry::num_monitor_devices>();
  if (init == nullptr || count == nullptr) {
    throw DriverNotFoundError(
        fmt::format("{} is not a usable ROCm SMI library: it lacks rsmi_init or rsmi_num_monitor_devices; {}",
                    loaded, no_amd_gpu_advice));
  }
  CapturedStderr captured;
  const Status status = init(0);
  const std::string said = captured.release();
  if (status != success) {
    throw DriverNotFoundError(fmt::format("no AMD GPU found: rsmi_init in {} failed with {} ({}{}); {}",
                                          loaded, status_name(status), library->describe(status),
                                          said.empty() ? "" : "; it said: " + said, no_amd_gpu_advice));
  }
  library->initialised_ = true;
  if (const Status counted = count(&library->device_count_); counted != success) {
    throw DriverNotFoundError(fmt::format("no AMD GPU found: rsmi_num_monitor_devices failed with {}; {}",
                                          status_name(counted), no_amd_gpu_advice));
  }
  if (library->device_count_ == 0) {
    throw DriverNotFoundError(
        fmt::format("no AMD GPU found: ROCm SMI ({}) sees no GPU; {}", loaded, no_amd_gpu_advice));
  }
  return library;
}

Library::Library(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {
  for (std::size_t entry = 0; entry < entry_count; ++entry) {
    const auto& symbols = entry_symbols[entry];
    for (std::size_t i = 0; i < symbols.size() && functions_[entry] == nullptr; ++i) {
      functions_[entry] = dlsym(handle_, symbols[i]);
      if (functions_[entry] != nullptr) found_name_[entry] = i;
    }
  }
}

Library::~Library() {
  // A failing rsmi_shut_down at exit leaves nothing to repair and a destructor
  // must not throw: its status is deliberately not acted upon.
  if (initialised_) {
    if (auto* shut_down = find<Entry::shut_down>()) static_cast<void>(shut_down());
  }
  dlclose(handle_);
}

std::string_view Library::symbol_name(Entry entry) const {
  const auto index = static_cast<std::size_t>(entry);
  return entry_symbols[index][found_name_[index]];
}

std::string Library::describe(Status status) const {
  if (auto* status_string = find<Entry::status_string>()) {
    const char* text = nullptr;
    if (status_string(status, &text) == success && text != nullptr) return text;
  }
  return status_name(status);
}

void Library::throw_missing(Entry entry, std::string_view action) const {
  throw NotSupportedError(fmt::format("cannot {}: the ROCm SMI library at {} lacks {}; update ROCm", action,
                                      path_, symbol_name(entry)));
}

}  // namespace dvfslab::rocm
