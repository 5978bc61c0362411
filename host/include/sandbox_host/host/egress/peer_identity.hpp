// Who is at the other end of a connection to the proxy (seed 000's SameUser): the proxy
// adds credentials, so it serves its own user and no other account on the machine.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace sandbox_host::egress {

struct Peer {
  std::optional<uid_t> uid;      // nullopt: the kernel did not say
  pid_t pid = 0;                 // unix sockets only (SO_PEERCRED); 0 otherwise
  std::string address;           // "127.0.0.1:40312", "[::1]:40312" or "unix"
  std::string describe() const;  // "127.0.0.1:40312 (uid 1000)", for Say lines
};

// The peer of a connected socket. For TCP on loopback the uid is that of the peer's own
// socket, looked up in the kernel's socket table (NETLINK_SOCK_DIAG, one exact lookup);
// for a unix socket it is SO_PEERCRED. A TCP peer that is not on this host has no uid.
Peer identify_peer(int fd);

// Why the peer may not use the proxy when only `uid` may, or an empty string when it may.
// A peer whose uid cannot be known is refused: the rule is "this user", not "not another".
std::string same_user_refusal(const Peer &peer, uid_t uid);

}  // namespace sandbox_host::egress
