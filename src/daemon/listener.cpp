#include "daemon/listener.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "dvfslab/error.hpp"

namespace dvfslab::daemon {
namespace {

sockaddr_un socket_address(const std::filesystem::path& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.string().size() >= sizeof address.sun_path)
    throw ConfigError(
        fmt::format("socket path '{}' is longer than {} bytes", path.string(), sizeof address.sun_path - 1));
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  return address;
}

gid_t group_id(const std::string& name) {
  std::vector<char> buffer(16384);
  group entry{};
  group* found = nullptr;
  if (::getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr)
    throw ConfigError(fmt::format("the policy's socket_group '{}' is not a group on this machine", name));
  return found->gr_gid;
}

// A socket file left by a daemon that was killed is replaced; one that a live
// daemon answers on is not.
void remove_stale_socket(const std::filesystem::path& path, const sockaddr_un& address) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) != 0) return;
  if (!S_ISSOCK(status.st_mode))
    throw ConfigError(
        fmt::format("'{}' exists and is not a socket; remove it or choose another --socket", path.string()));
  const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool answered =
      probe >= 0 && ::connect(probe, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  if (probe >= 0) ::close(probe);
  if (answered)
    throw BusyError(fmt::format("another daemon is listening on '{}'; stop it first", path.string()));
  ::unlink(path.c_str());
}

}  // namespace

Listener::Listener(const std::filesystem::path& path, const std::optional<std::string>& group) : path_(path) {
  const sockaddr_un address = socket_address(path);
  const std::optional<gid_t> gid = group ? std::optional<gid_t>(group_id(*group)) : std::nullopt;
  std::error_code error;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), error);
  remove_stale_socket(path, address);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) throw Error(fmt::format("cannot create a socket: {}", std::strerror(errno)));
  // Bound as 0600, so nobody connects before the mode and group below are set.
  const mode_t old_mask = ::umask(0177);
  const int bound = ::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  const int bind_error = errno;
  ::umask(old_mask);
  if (bound != 0) {
    ::close(fd_);
    throw Error(fmt::format("cannot listen on '{}': {}", path.string(), std::strerror(bind_error)));
  }
  const bool permitted = (!gid || ::chown(path.c_str(), 0, *gid) == 0) &&
                         ::chmod(path.c_str(), gid ? 0660 : 0666) == 0 && ::listen(fd_, 128) == 0;
  if (!permitted) {
    const int failure = errno;
    ::close(fd_);
    ::unlink(path.c_str());
    throw Error(fmt::format("cannot set up the socket '{}': {}", path.string(), std::strerror(failure)));
  }
}

Listener::Listener(int inherited_fd) : fd_(inherited_fd) {
  int listening = 0;
  socklen_t size = sizeof listening;
  if (::getsockopt(fd_, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) != 0 || listening == 0)
    throw ConfigError(fmt::format("file descriptor {} passed by systemd is not a listening socket", fd_));
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  ::fcntl(fd_, F_SETFD, FD_CLOEXEC);
}

Listener::~Listener() {
  ::close(fd_);
  if (!path_.empty()) ::unlink(path_.c_str());
}

}  // namespace dvfslab::daemon
