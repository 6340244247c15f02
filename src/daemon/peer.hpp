#pragma once
// Who is at the other end of a Unix socket, as the kernel says: SO_PEERCRED (uid,
// gid, pid at connect time) and SO_PEERGROUPS (its supplementary groups). Nothing
// the peer sends is used to identify it.
#include "daemon/policy.hpp"

namespace dvfslab::daemon {

// Error when the kernel does not answer (the socket is not a Unix socket).
PeerIdentity peer_identity(int socket_fd);

// The name of `uid` in the user database, or the number as text.
std::string user_name(unsigned uid);

}  // namespace dvfslab::daemon
