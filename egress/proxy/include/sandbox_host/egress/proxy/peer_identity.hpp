// Who is at the other end of a connection to the proxy (docs/design.md#host-side-walls): the proxy
// adds credentials, so it serves its own user and no other account on the machine.
#pragma once

#include <sandbox_host/host/identity/sock_diag.hpp>

#include <sys/socket.h>
#include <sys/types.h>

#include <optional>
#include <string>

namespace sandbox_host::egress {

struct Peer {
  std::optional<uid_t> uid;      // nullopt: not known, for the reason in `unknown`
  std::string unknown;           // why uid is nullopt, for the refusal
  pid_t pid = 0;                 // unix sockets only (SO_PEERCRED); 0 otherwise
  ino_t socket_inode = 0;        // TCP only: the peer's own socket, when its uid is known
  std::string address;           // "127.0.0.1:40312", "[::1]:40312" or "unix"
  std::string describe() const;  // "127.0.0.1:40312 (uid 1000)", for Say lines
};

// Names the peers of connected sockets. For a unix socket the uid is SO_PEERCRED, which the
// kernel recorded at connect(2). For TCP on loopback it is the owner of the peer's own
// socket, looked up in the kernel's socket table (NETLINK_SOCK_DIAG, one exact lookup) when
// identify is called: the uid of whoever made that socket (its inode's owner), which stays
// the same for as long as a process holds the socket open. So it is believed only for a
// socket that is still open (it has an inode) and in a state a connected client's socket
// is in (ESTABLISHED, or FIN_WAIT1/FIN_WAIT2 after shutdown(SHUT_WR), or CLOSE_WAIT).
// A client whose socket was already closed, whose socket is gone, or that is not on this
// host has no uid, whatever its timing, so a race with the lookup can only refuse.
// The netlink socket is made once and kept, so an instance belongs to one thread.
class PeerIdentifier {
 public:
  Peer identify(int fd);
  // For a socket just accepted: its peer's address as accept4(2) gave it, and the local
  // one as the listener's (bound to one address, so every accepted socket shares it).
  Peer identify(int fd, const sockaddr_storage &local, const sockaddr_storage &remote);

 private:
  struct Owner {
    std::optional<uid_t> uid;
    std::string unknown;  // why uid is nullopt
    ino_t inode = 0;      // the socket's, with uid
  };
  Owner tcp_socket_owner(const sockaddr_storage &source, const sockaddr_storage &destination);
  std::optional<SockDiag> diag_;  // opened at the first lookup, again after a failed one
};

// Why the peer may not use the proxy when only `uid` may, or an empty string when it may.
// A peer whose uid cannot be known is refused: the rule is "this user", not "not another".
std::string same_user_refusal(const Peer &peer, uid_t uid);

// Why a peer on the proxy's unix socket is refused as a sandbox that no proxied launch
// makes, or an empty string when it may be served: one that carries the sandbox mark
// (sandbox_mark.hpp) and shares this process's pid namespace, as a Landlock plugin does.
// Landlock runs no plugin with network proxied, and its plugin reaches the socket by path
// whatever its network: served, a plugin of network none would get the network, and the
// proxy's credentials, that its Spec withholds. A namespaces sandbox's relay (its init, in
// a pid namespace below this one) is served, and a process without the mark is.
std::string unproxied_sandbox_refusal(int connection, const Peer &peer);

}  // namespace sandbox_host::egress
