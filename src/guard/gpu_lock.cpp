// One dvfslab process per GPU: an flock on a per-UUID file. The kernel drops the
// lock when the holder dies, so a crash never leaves the GPU locked.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "guard/state_dir.hpp"

namespace dvfslab {
namespace {

// The holder writes its PID after taking the lock; a reader racing with that
// write sees an empty file.
std::string holder_pid_text(int fd) {
  char buffer[32] = {};
  const ssize_t size = ::pread(fd, buffer, sizeof buffer - 1, 0);
  std::string text = size > 0 ? std::string(buffer, static_cast<std::size_t>(size)) : std::string();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.empty() ? std::string("unknown") : text;
}

}  // namespace

GpuLock::GpuLock(const std::filesystem::path& state_dir, const GpuIdentity& gpu) {
  const std::filesystem::path dir = guard_detail::resolve_state_dir(state_dir);
  guard_detail::ensure_state_dir(dir);
  path_ = guard_detail::lock_file(dir, gpu.uuid);
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    throw Error(fmt::format("cannot open the GPU lock file {}: {}; set DVFSLAB_STATE_DIR to a writable directory",
                            path_.string(), std::strerror(errno)));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string holder = holder_pid_text(fd_);
    ::close(fd_);
    fd_ = -1;
    if (error == EWOULDBLOCK) {
      throw BusyError(fmt::format("{} ({}) is in use by dvfslab process {} (lock {}); wait for it to finish or "
                                  "stop it (it restores the GPU on SIGINT/SIGTERM)",
                                  gpu.name, gpu.uuid, holder, path_.string()));
    }
    throw Error(fmt::format("cannot lock {}: {}", path_.string(), std::strerror(error)));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    ::close(fd_);
    throw Error(fmt::format("cannot write the GPU lock file {}: {}", path_.string(), std::strerror(error)));
  }
}

GpuLock::~GpuLock() {
  // The file stays: unlinking it would let a third process lock a new inode while
  // a second one still waits on the old.
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace dvfslab
