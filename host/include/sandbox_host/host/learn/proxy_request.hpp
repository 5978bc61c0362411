// The host a plugin asks the egress proxy for, read from what it sends to the proxy's port
// under network proxied: an HTTP CONNECT, an absolute-form HTTP request, or a SOCKS5
// CONNECT. What the proxy then refuses is the allow list's to say; `run --learn` only names
// the hosts asked for. The bytes are the plugin's: nothing in them is trusted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sandbox_host::learn {

struct ProxyTarget {
  std::string host;  // as the request wrote it, brackets of an IPv6 literal removed
  std::uint16_t port = 0;
};

// The target of the request that starts sent, or nullopt when it starts no request of the
// three kinds (a SOCKS5 greeting, a request's later bytes, TLS records, garbage).
std::optional<ProxyTarget> proxy_target(std::string_view sent);

}  // namespace sandbox_host::learn
