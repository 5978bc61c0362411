#include <sandbox_host/host/identity/process_identity.hpp>
#include <sandbox_host/host/metrics/scrape_peer.hpp>
#include <sandbox_host/host/sandbox_mark.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sandbox_host::metrics {
namespace {

std::string peer_rule() {
  return scrape_service().rule_prefix + "-peer";
}

// Whether uid is a listed user other than serve's (false: serve's own); any other uid is
// refused, naming the key that would allow it, so that an operator whose Prometheus runs as
// its own user finds the fix.
bool listed_scraper(const std::string &peer, uid_t uid, uid_t served,
                    const std::vector<uid_t> &scrapers) {
  if (uid == served) return false;
  if (std::find(scrapers.begin(), scrapers.end(), uid) != scrapers.end()) return true;
  throw PeerRefusal(peer_rule(), scrape_service().request + " from " + peer +
                                     "; this metrics endpoint serves uid " +
                                     std::to_string(served) +
                                     " and the users of metrics.scrapers only; add uid " +
                                     std::to_string(uid) + " to metrics.scrapers to let it scrape");
}

void require_unmarked(pid_t pid, const std::string &who) {
  bool marked = false;
  try {
    marked = carries_sandbox_mark(pid);
  } catch (const std::exception &e) {
    throw PeerRefusal(peer_rule(), scrape_service().request + " from " + who +
                                       ": cannot tell whether it is sandboxed: " + e.what());
  }
  if (marked) throw sandboxed_peer_refusal(who, scrape_service());
}

// The processes of the given uids that /proc shows hold the peer's socket must be at least
// one, and none sandboxed.
void require_unsandboxed_holders(int connection, const egress::Peer &peer,
                                 const std::vector<uid_t> &uids) {
  const std::string &request = scrape_service().request;
  struct stat own {};
  if (::fstat(connection, &own) != 0) {
    throw PeerRefusal(peer_rule(), request + " from " + peer.describe() +
                                       ": fstat of the connection: " + std::strerror(errno));
  }
  std::vector<pid_t> found;
  std::string named;
  for (const uid_t uid : uids) {
    // Sockets share one device (sockfs); the peer's differs from ours by its inode alone.
    const std::vector<pid_t> of_uid =
        broker::holders("/proc", own.st_dev, peer.socket_inode, uid, ::getpid());
    found.insert(found.end(), of_uid.begin(), of_uid.end());
    named += (named.empty() ? "uid " : " or ") + std::to_string(uid);
  }
  if (found.empty()) {
    throw PeerRefusal(peer_rule(), request + " from " + peer.describe() + ": no process of " +
                                       named +
                                       " that /proc shows holds its socket, so it cannot be "
                                       "told from a sandbox");
  }
  for (const pid_t pid : found) {
    require_unmarked(pid, peer.describe() + " held by pid " + std::to_string(pid));
  }
}

void require_tcp_scraper(int connection, egress::PeerIdentifier &peers,
                         const std::vector<uid_t> &scrapers) {
  const egress::Peer peer = peers.identify(connection);
  if (!peer.uid) {
    throw PeerRefusal(peer_rule(),
                      scrape_service().request + " from " + peer.describe() + ": " + peer.unknown);
  }
  const uid_t served = ::geteuid();
  if (!listed_scraper(peer.describe(), *peer.uid, served, scrapers)) {
    require_unsandboxed_holders(connection, peer, {served});
  } else if (served == 0) {
    // A root serve sees every process: the listed user's, and its own sandboxes (uid 0),
    // which could hold a socket the listed user made and passed on.
    require_unsandboxed_holders(connection, peer, {*peer.uid, served});
  }
  // An unprivileged serve cannot search another user's /proc/<pid>/fd for the holders; a
  // listed uid is trusted by uid alone, since no sandbox of this serve runs as another uid
  // (docs/security-model.md).
}

void require_unix_scraper(int connection, const std::vector<uid_t> &scrapers) {
  const LaunchPeer peer = identify_peer(connection, scrape_service());
  const uid_t served = ::geteuid();
  const bool listed = listed_scraper(peer.describe(), peer.uid, served, scrapers);
  // Judged as over TCP, so that a listed uid is served alike on both listeners.
  if (listed && served != 0) return;
  // listed_scraper has judged the uid; what is left is the pinned peer's mark.
  require_unsandboxed(connection, peer, listed ? peer.uid : served, scrape_service());
}

}  // namespace

const PeerService &scrape_service() {
  static const PeerService service{
      "metrics", "a scrape", "metrics endpoint",
      "so that no plugin reads what the host launched, refused and carried"};
  return service;
}

void require_unsandboxed_scraper(int connection, bool tcp, egress::PeerIdentifier &peers,
                                 const std::vector<uid_t> &scrapers) {
  if (tcp) {
    require_tcp_scraper(connection, peers, scrapers);
  } else {
    require_unix_scraper(connection, scrapers);
  }
}

}  // namespace sandbox_host::metrics
