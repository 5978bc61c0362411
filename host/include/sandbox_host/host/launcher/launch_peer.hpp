// Who is at the other end of a launch service connection, and whether the service may
// launch for it: a process of the service's own uid that is not itself sandboxed. A
// sandboxed plugin of the same uid can reach the socket by path (Landlock does not restrict
// connect(2) to a pathname unix socket, and a namespaces plugin can once a read grant
// covers its directory), so the uid alone is no wall; the kernel's word on the peer
// process is (sandbox_mark.hpp).
#pragma once

#include <sys/types.h>

#include <stdexcept>
#include <string>

namespace sandbox_host {

// Why a peer is not served; the message names the peer.
class PeerRefusal : public std::runtime_error {
 public:
  PeerRefusal(std::string rule, const std::string &reason)
      : std::runtime_error(reason), rule_(std::move(rule)) {}
  const std::string &rule() const noexcept { return rule_; }

 private:
  std::string rule_;
};

struct LaunchPeer {
  pid_t pid = 0;  // SO_PEERCRED's, in this process's pid namespace; 0 when it sees none
  uid_t uid = 0;
  std::string describe() const;  // "pid N (uid U)"
};

// The process at the other end of connection, as SO_PEERCRED names it. Throws PeerRefusal
// when the kernel does not say.
LaunchPeer identify_peer(int connection);

// Throws PeerRefusal unless peer is a process of uid served that carries no sandbox mark,
// read while it was pinned as the connection's peer (peer_carries_sandbox_mark). A peer
// that has exited, one in a pid namespace this process cannot see, or one the kernel does
// not answer for, is refused.
void require_unsandboxed(int connection, const LaunchPeer &peer, uid_t served);

}  // namespace sandbox_host
