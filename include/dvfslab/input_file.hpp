#pragma once
// Input files (plans, sweep tables) must be regular files: a directory or a device
// such as /dev/zero would otherwise read as empty or never end.
#include <filesystem>
#include <string_view>

namespace dvfslab {

// Throws ConfigError when `path` exists but is a directory or not a regular file;
// `what` names the file's role in the message ("plan file", "sweep table"). A
// missing file is left to the caller, which knows what to suggest.
void require_regular_file(const std::filesystem::path& path, std::string_view what);

}  // namespace dvfslab
