#include <sandbox_host/host/broker/process_identity.hpp>
#include <sandbox_host/host/metrics/scrape_peer.hpp>
#include <sandbox_host/host/sandbox_mark.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sandbox_host::metrics {
namespace {

void require_unsandboxed_tcp_peer(int connection, egress::PeerIdentifier &peers) {
  const PeerService &service = scrape_service();
  const std::string peer_rule = service.rule_prefix + "-peer";
  const egress::Peer peer = peers.identify(connection);
  if (!peer.uid) {
    throw PeerRefusal(peer_rule,
                      service.request + " from " + peer.describe() + ": " + peer.unknown);
  }
  const uid_t served = ::geteuid();
  const std::string other_uid = other_uid_refusal(peer.describe(), *peer.uid, served, service);
  if (!other_uid.empty()) throw PeerRefusal(peer_rule, other_uid);
  struct stat own {};
  if (::fstat(connection, &own) != 0) {
    throw PeerRefusal(peer_rule, service.request + " from " + peer.describe() +
                                     ": fstat of the connection: " + std::strerror(errno));
  }
  // Sockets share one device (sockfs); the peer's differs from ours by its inode alone.
  const std::vector<pid_t> holders =
      broker::holders("/proc", own.st_dev, peer.socket_inode, served, ::getpid());
  if (holders.empty()) {
    throw PeerRefusal(peer_rule,
                      service.request + " from " + peer.describe() + ": no process of uid " +
                          std::to_string(served) +
                          " that /proc shows holds its socket, so it cannot be told from a "
                          "sandbox");
  }
  for (const pid_t pid : holders) {
    const std::string who = peer.describe() + " held by pid " + std::to_string(pid);
    bool marked = false;
    try {
      marked = carries_sandbox_mark(pid);
    } catch (const std::exception &e) {
      throw PeerRefusal(peer_rule, service.request + " from " + who +
                                       ": cannot tell whether it is sandboxed: " + e.what());
    }
    if (marked) throw sandboxed_peer_refusal(who, service);
  }
}

}  // namespace

const PeerService &scrape_service() {
  static const PeerService service{
      "metrics", "a scrape", "metrics endpoint",
      "so that no plugin reads what the host launched, refused and carried"};
  return service;
}

void require_unsandboxed_scraper(int connection, bool tcp, egress::PeerIdentifier &peers) {
  if (tcp) {
    require_unsandboxed_tcp_peer(connection, peers);
    return;
  }
  const LaunchPeer peer = identify_peer(connection, scrape_service());
  require_unsandboxed(connection, peer, ::geteuid(), scrape_service());
}

}  // namespace sandbox_host::metrics
