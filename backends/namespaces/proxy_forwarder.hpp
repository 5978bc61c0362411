// Network proxied: the sandbox's init listens on 127.0.0.1:<port> in the sandbox's empty
// network namespace and relays every connection to the egress proxy's unix socket, bytes
// unchanged. The plugin's clients find it through HTTP_PROXY and ALL_PROXY; the proxy tells
// HTTP from SOCKS5 by the first byte.
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <cstdint>
#include <string>

namespace sandbox_host::namespaces {

// A listening TCP socket on 127.0.0.1:port of this process's network namespace (0: any free
// port), close-on-exec. Throws SetupError.
UniqueFd listen_on_loopback(std::uint16_t port);

// Accepts connections on listener, for as long as the process lives, and relays each both
// ways to a new connection to the unix socket at socket_path, each way a RelayDirection
// (small reads copied, bulk data spliced through a pipe). A side's end of sending (shutdown or
// close) is passed on once all it sent has been delivered; a connection ends once both sides have
// finished, or at once when either fails; a client the proxy does not accept within 10 s, or
// refuses, is reset. Returns only by throwing SetupError, when it cannot go on at all.
[[noreturn]] void relay_forever(UniqueFd listener, const std::string &socket_path);

}  // namespace sandbox_host::namespaces
