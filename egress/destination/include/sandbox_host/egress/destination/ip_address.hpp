// IP addresses for the egress proxy's destination rules: the SDK's canonical IP literals
// (ip_literal.hpp, shared with modules that judge an address) and the special-purpose
// ranges (loopback, private, link-local, ...) an address falls in, IPv6 wrappers of IPv4
// included.
#pragma once

#include <sandbox_host/ip_literal.hpp>

#include <optional>
#include <string>

namespace sandbox_host::egress {

using ip::in_block;
using ip::IpAddress;
using ip::parse_ip_literal;
using ip::unmapped_ipv4;

// The special-purpose range address falls in, named for people ("loopback 127.0.0.0/8",
// "private 10.0.0.0/8", "link-local fe80::/10", "CGNAT 100.64.0.0/10", ...), or nullopt for
// a public address. IPv6 forms that carry an IPv4 address are unwrapped and the IPv4
// address judged, naming both ("IPv4-mapped ::ffff:0:0/96 wrapping 127.0.0.1, loopback
// 127.0.0.0/8"): IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16 and Teredo 2001::/32 (its
// server and its client) pass with a public IPv4 address inside. The deprecated
// IPv4-compatible ::/96 and IPv4-translated ::ffff:0:0:0/96 forms and the local-use NAT64
// prefix 64:ff9b:1::/48 are refused whatever they carry, and so is IPv6 outside global
// unicast 2000::/3 that no other rule names.
std::optional<std::string> special_range(const IpAddress &address);

}  // namespace sandbox_host::egress
