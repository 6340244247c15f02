#include "gpu/nvml/nvml_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <span>
#include <utility>
#include <vector>

#include "dvfslab/error.hpp"
#include "gpu/nvml/nvml_errors.hpp"
#include "gpu/shared_library.hpp"

namespace dvfslab::nvml {
namespace {

struct EntryInfo {
  std::string_view since;  // a driver branch that has the function
  std::span<const char* const> symbols;
};

#define DVFSLAB_NVML_SYMBOLS(member, signature, since, ...) \
  constexpr const char* member##_symbols[] = {__VA_ARGS__};
DVFSLAB_NVML_ENTRY_POINTS(DVFSLAB_NVML_SYMBOLS)
#undef DVFSLAB_NVML_SYMBOLS

constexpr EntryInfo entry_info[] = {
#define DVFSLAB_NVML_INFO(member, signature, since, ...) EntryInfo{since, member##_symbols},
    DVFSLAB_NVML_ENTRY_POINTS(DVFSLAB_NVML_INFO)
#undef DVFSLAB_NVML_INFO
};
static_assert(std::size(entry_info) == entry_count);

const EntryInfo& info_of(Entry entry) { return entry_info[static_cast<std::size_t>(entry)]; }

// Distinguishes "not looked up yet" from "looked up and missing" (nullptr).
char unresolved_tag;
void* const unresolved = &unresolved_tag;

std::pair<void*, std::string> open_library(const std::filesystem::path& configured) {
  return open_vendor_library(configured, default_library_names, [](const std::string& reasons) {
    return fmt::format(
        "no NVIDIA driver found: could not load the NVIDIA Management Library ({}). Install the "
        "NVIDIA driver or set DVFSLAB_NVML_LIBRARY to the path of libnvidia-ml.so.1",
        reasons);
  });
}

}  // namespace

std::shared_ptr<Library> Library::acquire(const std::filesystem::path& path) {
  return shared_vendor_library<Library>([&] { return load(path); });
}

std::shared_ptr<Library> Library::load(const std::filesystem::path& path) {
  auto [handle, loaded] = open_library(path);
  std::shared_ptr<Library> library(new Library(handle, loaded));
  auto* init = library->find<Entry::init>();
  if (init == nullptr) {
    throw DriverNotFoundError(
        fmt::format("{} is not a usable NVIDIA Management Library: it exports neither nvmlInit_v2 nor "
                    "nvmlInit; point DVFSLAB_NVML_LIBRARY at the driver's libnvidia-ml.so.1",
                    loaded));
  }
  if (const Return code = init(); code != success) {
    const std::string text = library->describe(code);
    const std::string_view function = library->symbol_name(Entry::init);
    dlclose(library->handle_);
    library->handle_ = nullptr;
    if (code == error_driver_not_loaded || code == error_lib_rm_version_mismatch ||
        code == error_library_not_found) {
      throw DriverNotFoundError(fmt::format(
          "the NVIDIA driver is not usable: nvmlInit failed with {} ({}). Check that the driver is "
          "loaded and matches its library (run nvidia-smi)",
          text, return_code_name(code)));
    }
    throw_error(code, Failure{"NVML", "initialise the NVIDIA Management Library", function, text, {}});
  }
  return library;
}

Library::Library(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {
  for (auto& function : functions_) function.store(unresolved);
  for (auto& index : found_name_) index.store(0);
}

Library::~Library() {
  if (handle_ == nullptr) return;
  // A failing nvmlShutdown at exit leaves nothing to repair and a destructor must
  // not throw: its code is deliberately not acted upon.
  if (auto* shutdown = find<Entry::shutdown>()) static_cast<void>(shutdown());
  dlclose(handle_);
}

void* Library::resolve(Entry entry) {
  auto& slot = functions_[static_cast<std::size_t>(entry)];
  void* function = slot.load();
  if (function != unresolved) return function;
  function = nullptr;
  const auto& symbols = info_of(entry).symbols;
  for (std::size_t i = 0; i < symbols.size() && function == nullptr; ++i) {
    function = dlsym(handle_, symbols[i]);
    if (function != nullptr) found_name_[static_cast<std::size_t>(entry)].store(i);
  }
  slot.store(function);
  return function;
}

std::string_view Library::symbol_name(Entry entry) {
  resolve(entry);
  return info_of(entry).symbols[found_name_[static_cast<std::size_t>(entry)].load()];
}

std::string Library::describe(Return code) {
  if (auto* error_string = find<Entry::error_string>()) {
    if (const char* text = error_string(code)) return text;
  }
  return std::string(return_code_name(code));
}

void Library::throw_missing(Entry entry, std::string_view action) {
  const EntryInfo& info = info_of(entry);
  std::string names;
  for (const char* symbol : info.symbols) names += fmt::format("{}{}", names.empty() ? "" : " or ", symbol);
  throw NotSupportedError(fmt::format(
      "cannot {}: the NVIDIA Management Library at {} lacks {}, which this driver is too old for; "
      "update the NVIDIA driver to {} or newer",
      action, path_, names, info.since));
}

}  // namespace dvfslab::nvml
