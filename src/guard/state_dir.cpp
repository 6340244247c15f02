#include "guard/state_dir.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"

namespace dvfslab {
namespace {

constexpr std::string_view journal_prefix = "journal-";
constexpr std::string_view journal_suffix = ".json";
constexpr std::string_view applied_record_prefix = "applied-";

// GPU UUIDs are "GPU-<hex and dashes>"; anything else is replaced so that a
// file name can never leave the directory.
std::string file_safe(const std::string& uuid) {
  std::string safe = uuid;
  for (char& c : safe) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                         c == '-' || c == '_' || c == '.';
    if (!allowed) c = '_';
  }
  // A leading '_' keeps "." and ".." from naming a directory (built by
  // concatenation: GCC 12's -Wrestrict misfires on string::insert at -O3).
  if (safe.empty() || safe.front() == '.') return "_" + safe;
  return safe;
}

}  // namespace

std::filesystem::path default_state_dir() {
  if (geteuid() == 0) return "/run/dvfslab";
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime != nullptr && *runtime != '\0') {
    return std::filesystem::path(runtime) / "dvfslab";
  }
  return fmt::format("/tmp/dvfslab-{}", geteuid());
}

namespace guard_detail {

std::filesystem::path resolve_state_dir(const std::filesystem::path& dir) {
  return dir.empty() ? default_state_dir() : dir;
}

void ensure_state_dir(const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (!error) ::chmod(dir.c_str(), 0700);  // a new directory; an existing one keeps its mode
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    throw Error(
        fmt::format("cannot create the dvfslab state directory {} ({}); set DVFSLAB_STATE_DIR "
                    "to a writable directory",
                    dir.string(), error ? error.message() : std::strerror(errno)));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw Error(
        fmt::format("the dvfslab state directory {} is not writable; set DVFSLAB_STATE_DIR to a "
                    "directory of your own",
                    dir.string()));
  }
}

std::filesystem::path journal_file(const std::filesystem::path& dir, const std::string& uuid) {
  return dir / (std::string(journal_prefix) + file_safe(uuid) + std::string(journal_suffix));
}

bool is_journal_file(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  return name.size() > journal_prefix.size() + journal_suffix.size() && name.starts_with(journal_prefix) &&
         name.ends_with(journal_suffix);
}

std::filesystem::path applied_record_file(const std::filesystem::path& dir, const std::string& uuid) {
  return dir / (std::string(applied_record_prefix) + file_safe(uuid) + std::string(journal_suffix));
}

bool is_applied_record_file(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  return name.size() > applied_record_prefix.size() + journal_suffix.size() &&
         name.starts_with(applied_record_prefix) && name.ends_with(journal_suffix);
}

}  // namespace guard_detail
}  // namespace dvfslab
