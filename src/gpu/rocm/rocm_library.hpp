#pragma once
// Loads the ROCm SMI library at run time, so dvfslab builds and starts on machines
// without AMD's driver, and initialises it once for every AMD GPU opened.
#include <array>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "gpu/rocm/rocm_api.hpp"

namespace dvfslab::rocm {

enum class Entry : std::size_t {
#define DVFSLAB_ROCM_ENUMERATOR(member, signature, ...) member,
  DVFSLAB_ROCM_ENTRY_POINTS(DVFSLAB_ROCM_ENUMERATOR)
#undef DVFSLAB_ROCM_ENUMERATOR
};

template <Entry E>
struct EntrySignature;
#define DVFSLAB_ROCM_SIGNATURE(member, signature, ...) \
  template <>                                          \
  struct EntrySignature<Entry::member> {               \
    using type = signature;                            \
  };
DVFSLAB_ROCM_ENTRY_POINTS(DVFSLAB_ROCM_SIGNATURE)
#undef DVFSLAB_ROCM_SIGNATURE

inline constexpr std::size_t entry_count = 0
#define DVFSLAB_ROCM_COUNT(member, signature, ...) +1
    DVFSLAB_ROCM_ENTRY_POINTS(DVFSLAB_ROCM_COUNT)
#undef DVFSLAB_ROCM_COUNT
    ;

// The file names tried in order when no library is configured.
inline constexpr std::array<std::string_view, 2> default_library_names = {"librocm_smi64.so.1",
                                                                          "librocm_smi64.so"};

// One loaded and initialised ROCm SMI, shared by every open AMD GPU: rsmi_init runs
// once and rsmi_shut_down when the last GPU closes.
class Library {
 public:
  // Loads `path` (empty: default_library_names) unless loaded already. Throws
  // DriverNotFoundError, in one line, when it cannot be loaded or initialised or
  // finds no AMD GPU.
  static std::shared_ptr<Library> acquire(const std::filesystem::path& path = {});
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // The entry point, or nullptr when this library lacks it.
  template <Entry E>
  typename EntrySignature<E>::type* find() const {
    return reinterpret_cast<typename EntrySignature<E>::type*>(functions_[static_cast<std::size_t>(E)]);
  }
  // The entry point; throws NotSupportedError naming it when the library lacks it.
  template <Entry E>
  typename EntrySignature<E>::type* get(std::string_view action) const {
    if (auto* function = find<E>()) return function;
    throw_missing(E, action);
  }

  std::string_view symbol_name(Entry entry) const;
  // ROCm SMI's own text for a status, or its name.
  std::string describe(Status status) const;
  std::uint32_t device_count() const { return device_count_; }
  const std::string& path() const { return path_; }

 private:
  Library(void* handle, std::string path);
  // A new instance, loaded and initialised; acquire() shares it.
  static std::shared_ptr<Library> load(const std::filesystem::path& path);
  [[noreturn]] void throw_missing(Entry entry, std::string_view action) const;

  void* handle_;
  std::string path_;
  bool initialised_ = false;
  std::uint32_t device_count_ = 0;
  std::array<void*, entry_count> functions_{};
  std::array<std::size_t, entry_count> found_name_{};
};

}  // namespace dvfslab::rocm
