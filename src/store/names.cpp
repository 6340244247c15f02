// Text forms of the store's enums, and the plan hash.
#include <fmt/format.h>

#include <cstdint>

#include "dvfslab/store.hpp"

namespace dvfslab {

std::string_view to_string(RunKind kind) { return kind == RunKind::sweep ? "sweep" : "import"; }

std::string_view to_string(RunStatus status) {
  switch (status) {
    case RunStatus::running: return "running";
    case RunStatus::finished: return "finished";
    case RunStatus::interrupted: return "interrupted";
    case RunStatus::failed: return "failed";
  }
  return "running";
}

std::string_view to_string(RecordRole role) { return role == RecordRole::grid ? "grid" : "drift"; }

std::string plan_hash(std::string_view plan_text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis
  for (unsigned char byte : plan_text) {
    hash ^= byte;
    hash *= 0x100000001b3ULL;  // FNV-1a 64 prime
  }
  return fmt::format("{:016x}", hash);
}

}  // namespace dvfslab
