#pragma once
// File names inside the state directory, shared by the journal and recovery.
#include <filesystem>
#include <string>

namespace dvfslab::guard_detail {

// `dir`, or default_state_dir() when empty.
std::filesystem::path resolve_state_dir(const std::filesystem::path& dir);
// Creates the directory (mode 0700) if missing; throws Error saying what to do.
void ensure_state_dir(const std::filesystem::path& dir);

std::filesystem::path journal_file(const std::filesystem::path& dir, const std::string& uuid);
bool is_journal_file(const std::filesystem::path& file);
// The prolog's record of what it applied to the GPU (applied_record.hpp).
std::filesystem::path applied_record_file(const std::filesystem::path& dir, const std::string& uuid);
bool is_applied_record_file(const std::filesystem::path& file);

}  // namespace dvfslab::guard_detail
