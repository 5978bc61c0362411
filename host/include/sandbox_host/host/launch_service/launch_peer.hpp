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

// The host service a peer asks, as its refusals name it: the launch service, or another
// that serves unsandboxed callers of its uid alone (the metrics endpoint).
struct PeerService {
  std::string rule_prefix = "launcher";  // rules <prefix>-peer and <prefix>-sandboxed-peer
  std::string request = "a launch";      // "a launch from pid N (uid U)"
  std::string name = "launch service";
  std::string why = "so that no plugin launches itself out";  // why sandboxes are refused
};

// The process at the other end of connection, as SO_PEERCRED names it. Throws PeerRefusal
// when the kernel does not say.
LaunchPeer identify_peer(int connection, const PeerService &service = {});

// Throws PeerRefusal unless peer is a process of uid served that carries no sandbox mark,
// read while it was pinned as the connection's peer (peer_carries_sandbox_mark). A peer
// that has exited, one in a pid namespace this process cannot see, or one the kernel does
// not answer for, is refused.
void require_unsandboxed(int connection, const LaunchPeer &peer, uid_t served,
                         const PeerService &service = {});

// The refusal of a peer of uid `uid` when the service serves uid served only; empty when
// they are the same.
std::string other_uid_refusal(const std::string &peer, uid_t uid, uid_t served,
                              const PeerService &service);
// The refusal of a peer that carries the sandbox mark.
PeerRefusal sandboxed_peer_refusal(const std::string &peer, const PeerService &service);

}  // namespace sandbox_host
