// IP addresses for the egress proxy's destination rules: a host written as an IP literal in
// any spelling made canonical before any rule looks at it, and the special-purpose ranges
// (loopback, private, link-local, ...) an address falls in, IPv6 wrappers of IPv4 included.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sandbox_host::egress {

struct IpAddress {
  int family = 0;                        // AF_INET or AF_INET6
  std::array<std::uint8_t, 16> bytes{};  // network order; IPv4 in the first 4
  // Canonical text: "127.0.0.1", "::1"; IPv6 in RFC 5952 form, with the dotted tail only
  // for IPv4-mapped addresses ("::ffff:127.0.0.1").
  std::string to_string() const;
  // Throws std::logic_error for an address without a family.
  sockaddr_storage to_sockaddr(std::uint16_t port, socklen_t &length) const;
  // Throws std::invalid_argument for a family other than AF_INET and AF_INET6.
  static IpAddress from_sockaddr(const sockaddr *address);
  bool operator==(const IpAddress &) const = default;
};

// A host written as an IP literal, in any spelling a client or resolver accepts, made
// canonical: IPv4 "127.1", "0x7f.0.0.1", "0177.0.0.1", "2130706433" (everything inet_aton
// takes, with nothing after it, and one trailing dot as in a name), IPv6 with or without
// [brackets], with a zone id ("fe80::1%eth0", "[fe80::1%25eth0]") whose zone is dropped.
// nullopt when text is not an IP literal.
std::optional<IpAddress> parse_ip_literal(std::string_view text);

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

// Whether address is in the block network/prefix_length; never across families. Throws
// std::invalid_argument for a prefix length past the network's family.
bool in_block(const IpAddress &address, const IpAddress &network, int prefix_length);

// The IPv4 address an IPv4-mapped IPv6 address (::ffff:a.b.c.d) stands for, which a
// dual-stack socket dials as that IPv4 address; nullopt for any other address.
std::optional<IpAddress> unmapped_ipv4(const IpAddress &address);

}  // namespace sandbox_host::egress
