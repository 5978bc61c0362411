#include <sandbox_host/host/launcher/launch_peer.hpp>

#include <sandbox_host/host/sandbox_mark.hpp>

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace sandbox_host {

std::string LaunchPeer::describe() const {
  return "pid " + std::to_string(pid) + " (uid " + std::to_string(uid) + ")";
}

LaunchPeer identify_peer(int connection) {
  ucred credentials{};
  socklen_t length = sizeof credentials;
  if (::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
    throw PeerRefusal("launcher-peer",
                      std::string("read the client's credentials: ") + std::strerror(errno));
  }
  return {credentials.pid, credentials.uid};
}

void require_unsandboxed(int connection, const LaunchPeer &peer, uid_t served) {
  if (peer.uid != served) {
    throw PeerRefusal("launcher-peer", "a launch from " + peer.describe() +
                                           "; this launch service serves uid " +
                                           std::to_string(served) + " only");
  }
  bool marked = false;
  try {
    marked = peer_carries_sandbox_mark(connection, peer.pid);
  } catch (const std::exception &e) {
    throw PeerRefusal("launcher-peer", "a launch from " + peer.describe() +
                                           ": cannot tell whether it is sandboxed: " + e.what());
  }
  if (marked) {
    throw PeerRefusal("launcher-sandboxed-peer",
                      "a launch from " + peer.describe() +
                          ", a process inside a sandbox (its RLIMIT_RTTIME hard limit is 0, the "
                          "mark stage 1 gives every sandbox); the launch service serves "
                          "unsandboxed callers only, so that no plugin launches itself out");
  }
}

}  // namespace sandbox_host
