#pragma once
// Compile-time checks that each function the fake exports matches its entry in
// the entry-point list of src/gpu/nvml/nvml_api.hpp: the same C signature, and a
// name the list gives for that entry. A fake export typed differently from what
// dvfslab calls through would otherwise pass every test while hiding an ABI bug.
#include <cstddef>
#include <initializer_list>
#include <string_view>
#include <type_traits>

#include "gpu/nvml/nvml_api.hpp"

namespace dvfslab::fake_nvml::checks {

using namespace dvfslab::nvml;

enum class Entry : std::size_t {
#define FAKE_NVML_ENTRY(member, signature, since, ...) member,
  DVFSLAB_NVML_ENTRY_POINTS(FAKE_NVML_ENTRY)
#undef FAKE_NVML_ENTRY
};

template <Entry E>
struct Signature;
#define FAKE_NVML_SIGNATURE(member, signature, since, ...) \
  template <>                                              \
  struct Signature<Entry::member> {                        \
    using type = signature;                                \
  };
DVFSLAB_NVML_ENTRY_POINTS(FAKE_NVML_SIGNATURE)
#undef FAKE_NVML_SIGNATURE

// Whether `name` is one of the symbol names the list tries for `entry`.
constexpr bool names(Entry entry, std::string_view name) {
  switch (entry) {
#define FAKE_NVML_NAMES(member, signature, since, ...) \
  case Entry::member:                                  \
    for (std::string_view symbol : {__VA_ARGS__}) {    \
      if (symbol == name) return true;                 \
    }                                                  \
    return false;
    DVFSLAB_NVML_ENTRY_POINTS(FAKE_NVML_NAMES)
#undef FAKE_NVML_NAMES
  }
  return false;
}

// How many symbol names the list holds over all entries.
inline constexpr std::size_t symbol_count = 0
#define FAKE_NVML_COUNT(member, signature, since, ...) +std::initializer_list<const char*>{__VA_ARGS__}.size()
    DVFSLAB_NVML_ENTRY_POINTS(FAKE_NVML_COUNT)
#undef FAKE_NVML_COUNT
    ;

}  // namespace dvfslab::fake_nvml::checks

// Checks the exported `function` against list entry `entry` (a member name of the list).
#define FAKE_NVML_CHECK_EXPORT(entry, function)                                                            \
  static_assert(std::is_same_v<decltype(&function), dvfslab::fake_nvml::checks::Signature<                 \
                                                        dvfslab::fake_nvml::checks::Entry::entry>::type*>, \
                #function " is not typed as entry " #entry " of nvml_api.hpp");                            \
  static_assert(dvfslab::fake_nvml::checks::names(dvfslab::fake_nvml::checks::Entry::entry, #function),    \
                #function " is not a symbol name of entry " #entry " of nvml_api.hpp")
