// Who may scrape the metrics endpoint: a process of serve's own uid that carries no sandbox
// mark, as for the launch service, or one of a user the operator listed (launcher/launch_peer.hpp).
// What the endpoint shows (the launches, the refusals, the egress's traffic) is the operator's, and
// a plugin reaches it: the unix socket by path from Landlock, the loopback port from any plugin of
// network "outbound".
#pragma once

#include <sandbox_host/egress/proxy/peer_identity.hpp>
#include <sandbox_host/host/launch_service/launch_peer.hpp>

#include <sys/types.h>

#include <vector>

namespace sandbox_host::metrics {

// How the endpoint's refusals name it: rules metrics-peer and metrics-sandboxed-peer.
const PeerService &scrape_service();

// Throws PeerRefusal unless the peer of the accepted connection may scrape. A unix socket's
// peer is SO_PEERCRED's process, pinned while its mark is read (require_unsandboxed). A TCP
// peer has no credentials to pin: its socket is found in the kernel's socket table (its
// owner and inode, egress::PeerIdentifier), every process of serve's uid that holds that
// socket is found in /proc (broker::holders), and the peer passes only when there is at
// least one and none carries the mark. A sandboxed holder that /proc does not show (it is
// not dumpable) leaves none found, so it is refused too.
//
// A peer of a uid in scrapers (metrics.scrapers) is served too. Where serve runs as root it
// passes the same checks, its socket's holders sought among the listed uid's processes and
// root's (serve's sandboxes run as root); an unprivileged serve can read neither another
// user's /proc nor its marks, and serves a listed uid on the uid alone, since none of its
// sandboxes runs as another uid (docs/security-model.md). Any other uid is refused.
void require_unsandboxed_scraper(int connection, bool tcp, egress::PeerIdentifier &peers,
                                 const std::vector<uid_t> &scrapers);

}  // namespace sandbox_host::metrics
