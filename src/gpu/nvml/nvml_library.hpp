#pragma once
// Loads the NVIDIA Management Library at run time and resolves its entry points
// lazily, so dvfslab builds and starts on machines without an NVIDIA driver.
#include <array>
#include <atomic>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "gpu/nvml/nvml_api.hpp"

namespace dvfslab::nvml {

enum class Entry : std::size_t {
#define DVFSLAB_NVML_ENUMERATOR(member, signature, since, ...) member,
  DVFSLAB_NVML_ENTRY_POINTS(DVFSLAB_NVML_ENUMERATOR)
#undef DVFSLAB_NVML_ENUMERATOR
};

template <Entry E>
struct EntrySignature;
#define DVFSLAB_NVML_SIGNATURE(member, signature, since, ...) \
  template <>                                                 \
  struct EntrySignature<Entry::member> {                      \
    using type = signature;                                   \
  };
DVFSLAB_NVML_ENTRY_POINTS(DVFSLAB_NVML_SIGNATURE)
#undef DVFSLAB_NVML_SIGNATURE

inline constexpr std::size_t entry_count = 0
#define DVFSLAB_NVML_COUNT(member, signature, since, ...) +1
    DVFSLAB_NVML_ENTRY_POINTS(DVFSLAB_NVML_COUNT)
#undef DVFSLAB_NVML_COUNT
    ;

// The library file names tried in order when DVFSLAB_NVML_LIBRARY is unset.
inline constexpr std::array<std::string_view, 2> default_library_names = {"libnvidia-ml.so.1",
                                                                          "libnvidia-ml.so"};

// One loaded and initialised NVML. Every NvmlGpu holds it; acquire() hands out the
// same instance while any holder is alive, so nvmlInit runs once and nvmlShutdown
// runs when the last GPU is closed.
class Library {
 public:
  // Loads `path` (empty: default_library_names) unless a library is loaded
  // already. Throws DriverNotFoundError when it cannot be loaded or initialised.
  static std::shared_ptr<Library> acquire(const std::filesystem::path& path = {});
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // The entry point, or nullptr when this library lacks every name of it.
  template <Entry E>
  typename EntrySignature<E>::type* find() {
    return reinterpret_cast<typename EntrySignature<E>::type*>(resolve(E));
  }
  // The entry point; throws NotSupportedError naming the function and the driver
  // that has it when this library lacks it.
  template <Entry E>
  typename EntrySignature<E>::type* get(std::string_view action) {
    if (auto* function = find<E>()) return function;
    throw_missing(E, action);
  }

  // The name the entry point was found under (or its preferred name when missing).
  std::string_view symbol_name(Entry entry);
  // NVML's own text for a return code ("Insufficient Permissions").
  std::string describe(Return code);
  const std::string& path() const { return path_; }

 private:
  Library(void* handle, std::string path);
  // A new instance, loaded and initialised; acquire() shares it.
  static std::shared_ptr<Library> load(const std::filesystem::path& path);
  void* resolve(Entry entry);
  [[noreturn]] void throw_missing(Entry entry, std::string_view action);

  void* handle_;
  std::string path_;
  // Resolved lazily; unresolved_marker until looked up, nullptr when missing.
  std::array<std::atomic<void*>, entry_count> functions_;
  std::array<std::atomic<std::size_t>, entry_count> found_name_;
};

}  // namespace dvfslab::nvml
