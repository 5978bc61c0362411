#include <sandbox_host/host/launch_service/launch_peer.hpp>

#include <sandbox_host/host/sandbox_mark.hpp>

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace sandbox_host {

std::string LaunchPeer::describe() const {
  return "pid " + std::to_string(pid) + " (uid " + std::to_string(uid) + ")";
}

LaunchPeer identify_peer(int connection, const PeerService &service) {
  ucred credentials{};
  socklen_t length = sizeof credentials;
  if (::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
    throw PeerRefusal(service.rule_prefix + "-peer",
                      std::string("read the client's credentials: ") + std::strerror(errno));
  }
  return {credentials.pid, credentials.uid};
}

std::string other_uid_refusal(const std::string &peer, uid_t uid, uid_t served,
                              const PeerService &service) {
  if (uid == served) return {};
  return service.request + " from " + peer + "; this " + service.name + " serves uid " +
         std::to_string(served) + " only";
}

PeerRefusal sandboxed_peer_refusal(const std::string &peer, const PeerService &service) {
  return PeerRefusal(service.rule_prefix + "-sandboxed-peer",
                     service.request + " from " + peer +
                         ", a process inside a sandbox (its RLIMIT_RTTIME hard limit is 0, the "
                         "mark stage 1 gives every sandbox); the " +
                         service.name + " serves unsandboxed callers only, " + service.why);
}

void require_unsandboxed(int connection, const LaunchPeer &peer, uid_t served,
                         const PeerService &service) {
  const std::string other_uid = other_uid_refusal(peer.describe(), peer.uid, served, service);
  if (!other_uid.empty()) throw PeerRefusal(service.rule_prefix + "-peer", other_uid);
  bool marked = false;
  try {
    marked = peer_carries_sandbox_mark(connection, peer.pid);
  } catch (const std::exception &e) {
    throw PeerRefusal(service.rule_prefix + "-peer",
                      service.request + " from " + peer.describe() +
                          ": cannot tell whether it is sandboxed: " + e.what());
  }
  if (marked) throw sandboxed_peer_refusal(peer.describe(), service);
}

}  // namespace sandbox_host
