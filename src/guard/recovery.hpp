#pragma once
#include <filesystem>

#include "dvfslab/guard.hpp"

namespace dvfslab::guard_detail {

// Restores and removes the journal `file` of `gpu`; the caller holds the GPU's
// lock. Throws (keeping the journal) when a control call fails.
RecoveryResult recover_journal(Gpu& gpu, const std::filesystem::path& file);

}  // namespace dvfslab::guard_detail
