#include "daemon/peer.hpp"

#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "dvfslab/error.hpp"

namespace dvfslab::daemon {
namespace {

std::string group_name(gid_t gid) {
  std::vector<char> buffer(16384);
  group entry{};
  group* found = nullptr;
  if (::getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr)
    return found->gr_name;
  return std::to_string(gid);
}

// The peer's supplementary groups as the kernel holds them for its socket.
std::vector<gid_t> peer_groups(int socket_fd) {
  std::vector<gid_t> groups(64);
  for (int attempt = 0; attempt < 4; ++attempt) {
    socklen_t size = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (::getsockopt(socket_fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &size) == 0) {
      groups.resize(size / sizeof(gid_t));
      return groups;
    }
    if (errno != ERANGE) return {};
    groups.resize(size / sizeof(gid_t) + 1);
  }
  return {};
}

}  // namespace

std::string user_name(unsigned uid) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr)
    return found->pw_name;
  return std::to_string(uid);
}

PeerIdentity peer_identity(int socket_fd) {
  ucred credentials{};
  socklen_t size = sizeof credentials;
  if (::getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0)
    throw Error(fmt::format("cannot read the peer's credentials (SO_PEERCRED): {}", std::strerror(errno)));
  PeerIdentity peer;
  peer.uid = credentials.uid;
  peer.gid = credentials.gid;
  peer.pid = credentials.pid;
  peer.user = user_name(credentials.uid);
  std::vector<gid_t> gids = peer_groups(socket_fd);
  gids.push_back(credentials.gid);
  std::sort(gids.begin(), gids.end());
  gids.erase(std::unique(gids.begin(), gids.end()), gids.end());
  for (gid_t gid : gids) peer.groups.push_back(group_name(gid));
  return peer;
}

}  // namespace dvfslab::daemon
