// Who is at the other end of a connection to the proxy (seed 000's SameUser): the proxy
// adds credentials, so it serves its own user and no other account on the machine.
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace sandbox_host::egress {

struct Peer {
  std::optional<uid_t> uid;      // nullopt: the kernel did not say
  pid_t pid = 0;                 // unix sockets only (SO_PEERCRED); 0 otherwise
  std::string address;           // "127.0.0.1:40312", "[::1]:40312" or "unix"
  std::string describe() const;  // "127.0.0.1:40312 (uid 1000)", for Say lines
};

// Names the peers of connected sockets. For TCP on loopback the uid is that of the peer's
// own socket, looked up in the kernel's socket table (NETLINK_SOCK_DIAG, one exact lookup);
// for a unix socket it is SO_PEERCRED. A TCP peer that is not on this host has no uid.
// The netlink socket is made once and kept, so an instance belongs to one thread.
class PeerIdentifier {
 public:
  Peer identify(int fd);

 private:
  std::optional<uid_t> tcp_socket_owner(const sockaddr_storage &source,
                                        const sockaddr_storage &destination);
  UniqueFd diag_;
  std::uint32_t sequence_ = 0;
};

// Why the peer may not use the proxy when only `uid` may, or an empty string when it may.
// A peer whose uid cannot be known is refused: the rule is "this user", not "not another".
std::string same_user_refusal(const Peer &peer, uid_t uid);

}  // namespace sandbox_host::egress
