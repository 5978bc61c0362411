// Where the egress proxy listens on TCP: an address of the loopback interface and a port,
// parsed once from the config's text and handed to the proxy as an address.
#pragma once

#include <sandbox_host/egress/destination/ip_address.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sandbox_host::egress {

struct LoopbackEndpoint {
  IpAddress address;       // in 127.0.0.0/8, or ::1
  std::uint16_t port = 0;  // 0: any free port

  // "127.0.0.1:3128" or "[::1]:3128".
  std::string to_string() const;

  // "127.0.0.1:3128" (any address of 127.0.0.0/8, in dotted decimal) or "[::1]:3128", a
  // port of 0 to 65535 in decimal. nullopt for anything else: a name, another address, an
  // IPv4 shorthand such as "127.1", brackets around IPv4, an IPv6 address without them.
  static std::optional<LoopbackEndpoint> parse(std::string_view text);

  bool operator==(const LoopbackEndpoint &) const = default;
};

}  // namespace sandbox_host::egress
