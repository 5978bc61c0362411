// IP literals as every client and resolver spells them, made canonical: the one reading of
// "is this host an address, and which" that the egress proxy's rules and any module judging
// a proxy or server address (kubeconfig's loopback test) share, so that both take
// "127.1" and "[::ffff:127.0.0.1]" for the same address.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sandbox_host::ip {

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

namespace detail {

inline IpAddress ipv4(const std::uint8_t *four) {
  IpAddress address{AF_INET, {}};
  std::memcpy(address.bytes.data(), four, 4);
  return address;
}

inline bool is_ipv4_number_character(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == 'x' ||
         c == 'X' || c == '.';
}

// inet_aton's grammar (one to four parts, each decimal, octal or hex, the last filling the
// bytes left), but only the whole text: glibc's inet_aton stops at whitespace and ignores
// what follows, which no host may carry.
inline std::optional<IpAddress> parse_ipv4(std::string_view text) {
  if (text.size() >= 2 && text.back() == '.' && text[text.size() - 2] != '.') {
    text.remove_suffix(1);
  }
  if (text.empty() || text.size() > 64) return std::nullopt;
  for (char c : text) {
    if (!is_ipv4_number_character(c)) return std::nullopt;
  }
  const std::string terminated(text);
  in_addr parsed{};
  if (::inet_aton(terminated.c_str(), &parsed) == 0) return std::nullopt;
  return ipv4(reinterpret_cast<const std::uint8_t *>(&parsed.s_addr));
}

// RFC 6874's ZoneID: unreserved characters and percent-encoded bytes.
inline bool is_zone_id(std::string_view zone) {
  if (zone.empty()) return false;
  for (char c : zone) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                            c == '~' || c == '%';
    if (!unreserved) return false;
  }
  return true;
}

inline std::optional<IpAddress> parse_ipv6(std::string_view text) {
  const bool bracketed = !text.empty() && text.front() == '[';
  if (bracketed) {
    if (text.size() < 2 || text.back() != ']') return std::nullopt;
    text = text.substr(1, text.size() - 2);
  }
  if (text.find(':') == std::string_view::npos) return std::nullopt;
  if (const auto percent = text.find('%'); percent != std::string_view::npos) {
    std::string_view zone = text.substr(percent + 1);
    // In a URL the zone's "%" is itself percent-encoded (RFC 6874): [fe80::1%25eth0].
    if (bracketed && zone.substr(0, 2) == "25") zone.remove_prefix(2);
    if (!is_zone_id(zone)) return std::nullopt;
    text = text.substr(0, percent);
  }
  if (text.size() > INET6_ADDRSTRLEN) return std::nullopt;
  const std::string terminated(text);
  IpAddress address{AF_INET6, {}};
  if (::inet_pton(AF_INET6, terminated.c_str(), address.bytes.data()) != 1) return std::nullopt;
  return address;
}

inline std::string ipv4_text(const std::uint8_t *four) {
  return std::to_string(four[0]) + "." + std::to_string(four[1]) + "." + std::to_string(four[2]) +
         "." + std::to_string(four[3]);
}

inline bool is_mapped(const IpAddress &address) {
  static constexpr std::uint8_t kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return address.family == AF_INET6 &&
         std::memcmp(address.bytes.data(), kMappedPrefix, sizeof kMappedPrefix) == 0;
}

// RFC 5952 written out rather than left to inet_ntop, which differs between C libraries
// and in glibc writes the deprecated IPv4-compatible form dotted ("::127.0.0.1").
inline std::string ipv6_text(const IpAddress &address) {
  if (is_mapped(address)) return "::ffff:" + ipv4_text(address.bytes.data() + 12);
  std::array<unsigned, 8> words{};
  for (int i = 0; i < 8; ++i) words[i] = address.bytes[2 * i] << 8 | address.bytes[2 * i + 1];
  // The longest run of two or more zero words becomes "::", the first of equal runs.
  int best_start = -1, best_length = 1;
  for (int i = 0; i < 8;) {
    if (words[i] != 0) {
      ++i;
      continue;
    }
    int end = i;
    while (end < 8 && words[end] == 0) ++end;
    if (end - i > best_length) best_start = i, best_length = end - i;
    i = end;
  }
  std::string text;
  for (int i = 0; i < 8;) {
    if (i == best_start) {
      text += "::";
      i += best_length;
      continue;
    }
    if (!text.empty() && text.back() != ':') text += ':';
    char word[5];
    std::snprintf(word, sizeof word, "%x", words[i]);
    text += word;
    ++i;
  }
  return text;
}

}  // namespace detail

inline std::string IpAddress::to_string() const {
  if (family == AF_INET) return detail::ipv4_text(bytes.data());
  if (family == AF_INET6) return detail::ipv6_text(*this);
  return "(no address)";
}

inline sockaddr_storage IpAddress::to_sockaddr(std::uint16_t port, socklen_t &length) const {
  sockaddr_storage storage{};
  if (family == AF_INET) {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(port);
    std::memcpy(&in.sin_addr, bytes.data(), 4);
    std::memcpy(&storage, &in, sizeof in);
    length = sizeof in;
  } else if (family == AF_INET6) {
    sockaddr_in6 in6{};
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(port);
    std::memcpy(&in6.sin6_addr, bytes.data(), 16);
    std::memcpy(&storage, &in6, sizeof in6);
    length = sizeof in6;
  } else {
    throw std::logic_error("IpAddress::to_sockaddr: the address has no family (" +
                           std::to_string(family) + ")");
  }
  return storage;
}

inline IpAddress IpAddress::from_sockaddr(const sockaddr *address) {
  if (address == nullptr) throw std::invalid_argument("IpAddress::from_sockaddr: no address");
  if (address->sa_family == AF_INET) {
    sockaddr_in in{};
    std::memcpy(&in, address, sizeof in);
    return detail::ipv4(reinterpret_cast<const std::uint8_t *>(&in.sin_addr));
  }
  if (address->sa_family == AF_INET6) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, address, sizeof in6);
    IpAddress ip{AF_INET6, {}};
    std::memcpy(ip.bytes.data(), &in6.sin6_addr, 16);
    return ip;
  }
  throw std::invalid_argument("IpAddress::from_sockaddr: address family " +
                              std::to_string(address->sa_family) +
                              " is neither AF_INET nor AF_INET6");
}

// A host written as an IP literal, in any spelling a client or resolver accepts, made
// canonical: IPv4 "127.1", "0x7f.0.0.1", "0177.0.0.1", "2130706433" (everything inet_aton
// takes, with nothing after it, and one trailing dot as in a name), IPv6 with or without
// [brackets], with a zone id ("fe80::1%eth0", "[fe80::1%25eth0]") whose zone is dropped.
// nullopt when text is not an IP literal.
inline std::optional<IpAddress> parse_ip_literal(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text.front() == '[' || text.find(':') != std::string_view::npos)
    return detail::parse_ipv6(text);
  return detail::parse_ipv4(text);
}

// Whether address is in the block network/prefix_length; never across families. Throws
// std::invalid_argument for a prefix length past the network's family.
inline bool in_block(const IpAddress &address, const IpAddress &network, int prefix_length) {
  const int full_length = network.family == AF_INET ? 32 : 128;
  if (prefix_length < 0 || prefix_length > full_length) {
    throw std::invalid_argument("in_block: prefix length " + std::to_string(prefix_length) +
                                " is not from 0 to " + std::to_string(full_length));
  }
  if (address.family != network.family) return false;
  const int whole_bytes = prefix_length / 8, rest_bits = prefix_length % 8;
  if (std::memcmp(address.bytes.data(), network.bytes.data(), whole_bytes) != 0) return false;
  if (rest_bits == 0) return true;
  const auto mask = static_cast<std::uint8_t>(0xff << (8 - rest_bits));
  return ((address.bytes[whole_bytes] ^ network.bytes[whole_bytes]) & mask) == 0;
}

// The IPv4 address an IPv4-mapped IPv6 address (::ffff:a.b.c.d) stands for, which a
// dual-stack socket dials as that IPv4 address; nullopt for any other address.
inline std::optional<IpAddress> unmapped_ipv4(const IpAddress &address) {
  if (!detail::is_mapped(address)) return std::nullopt;
  return detail::ipv4(address.bytes.data() + 12);
}

}  // namespace sandbox_host::ip
