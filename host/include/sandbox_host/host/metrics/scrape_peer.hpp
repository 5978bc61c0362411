// Who may scrape the metrics endpoint: a process of serve's own uid that carries no sandbox
// mark, as for the launch service (launcher/launch_peer.hpp). What the endpoint shows (the
// launches, the refusals, the egress's traffic) is the operator's, and a plugin reaches it:
// the unix socket by path from Landlock, the loopback port from any plugin of network
// "outbound".
#pragma once

#include <sandbox_host/host/egress/peer_identity.hpp>
#include <sandbox_host/host/launcher/launch_peer.hpp>

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
void require_unsandboxed_scraper(int connection, bool tcp, egress::PeerIdentifier &peers);

}  // namespace sandbox_host::metrics
