// IP literals in every spelling made canonical, and the special-purpose ranges
// (ip_address.hpp): IANA's special-purpose address registries, plus multicast, the IPv6
// forms that carry an IPv4 address, and IPv6 outside the global unicast block.
#include <sandbox_host/host/egress/ip_address.hpp>

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace sandbox_host::egress {
namespace {

IpAddress ipv4(const std::uint8_t *four) {
  IpAddress address{AF_INET, {}};
  std::memcpy(address.bytes.data(), four, 4);
  return address;
}

bool is_ipv4_number_character(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == 'x' ||
         c == 'X' || c == '.';
}

// inet_aton's grammar (one to four parts, each decimal, octal or hex, the last filling the
// bytes left), but only the whole text: glibc's inet_aton stops at whitespace and ignores
// what follows, which no host may carry.
std::optional<IpAddress> parse_ipv4(std::string_view text) {
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
bool is_zone_id(std::string_view zone) {
  if (zone.empty()) return false;
  for (char c : zone) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                            c == '~' || c == '%';
    if (!unreserved) return false;
  }
  return true;
}

std::optional<IpAddress> parse_ipv6(std::string_view text) {
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

std::string ipv4_text(const std::uint8_t *four) {
  return std::to_string(four[0]) + "." + std::to_string(four[1]) + "." + std::to_string(four[2]) +
         "." + std::to_string(four[3]);
}

bool is_mapped(const IpAddress &address) {
  static constexpr std::uint8_t kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return address.family == AF_INET6 &&
         std::memcmp(address.bytes.data(), kMappedPrefix, sizeof kMappedPrefix) == 0;
}

// RFC 5952 written out rather than left to inet_ntop, which differs between C libraries
// and in glibc writes the deprecated IPv4-compatible form dotted ("::127.0.0.1").
std::string ipv6_text(const IpAddress &address) {
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

struct Range {
  IpAddress network;
  int prefix_length;
  std::string name;  // kind and block, as people read them: "loopback 127.0.0.0/8"
};

bool in_range(const IpAddress &address, const Range &range) {
  return in_block(address, range.network, range.prefix_length);
}

// A block written as it is shown; one without a prefix length is a single address.
Range range(const char *kind, const char *block) {
  const std::string_view text(block);
  const auto slash = text.find('/');
  const auto network = parse_ip_literal(text.substr(0, slash));
  if (!network) throw std::logic_error("bad special range " + std::string(block));
  const int full = network->family == AF_INET ? 32 : 128;
  const int length =
      slash == std::string_view::npos ? full : std::stoi(std::string(text.substr(slash + 1)));
  return {*network, length, std::string(kind) + " " + block};
}

std::vector<Range> ranges(std::initializer_list<std::pair<const char *, const char *>> table) {
  std::vector<Range> parsed;
  for (const auto &[kind, block] : table) parsed.push_back(range(kind, block));
  return parsed;
}

const std::vector<Range> &ipv4_ranges() {
  // More specific blocks first, so 0.0.0.0 is unspecified rather than this network.
  static const std::vector<Range> table = ranges({
      {"unspecified", "0.0.0.0"},
      {"this network", "0.0.0.0/8"},
      {"private", "10.0.0.0/8"},
      {"CGNAT", "100.64.0.0/10"},
      {"loopback", "127.0.0.0/8"},
      {"link-local", "169.254.0.0/16"},
      {"private", "172.16.0.0/12"},
      {"IETF protocol assignments", "192.0.0.0/24"},
      {"documentation", "192.0.2.0/24"},
      {"deprecated 6to4 relay anycast", "192.88.99.0/24"},
      {"private", "192.168.0.0/16"},
      {"benchmarking", "198.18.0.0/15"},
      {"documentation", "198.51.100.0/24"},
      {"documentation", "203.0.113.0/24"},
      {"multicast", "224.0.0.0/4"},
      {"broadcast", "255.255.255.255"},
      {"reserved", "240.0.0.0/4"},
  });
  return table;
}

const std::vector<Range> &ipv6_ranges() {
  static const std::vector<Range> table = ranges({
      {"unspecified", "::"},
      {"loopback", "::1"},
      {"discard-only", "100::/64"},
      {"benchmarking", "2001:2::/48"},
      {"IETF protocol assignments", "2001::/23"},
      {"documentation", "2001:db8::/32"},
      {"documentation", "3fff::/20"},
      {"SRv6 SIDs", "5f00::/16"},
      {"unique local", "fc00::/7"},
      {"link-local", "fe80::/10"},
      {"deprecated site-local", "fec0::/10"},
      {"multicast", "ff00::/8"},
  });
  return table;
}

std::optional<std::string> first_range(const IpAddress &address, const std::vector<Range> &table) {
  for (const auto &range : table) {
    if (in_range(address, range)) return range.name;
  }
  return std::nullopt;
}

// The IPv6 forms that carry an IPv4 address, and the block every public IPv6 address is in.
struct Ipv6Forms {
  // Forms that reach the IPv4 address they carry (a dual-stack socket, a NAT64 gateway, a
  // 6to4 relay, a Teredo server and client): judged on that address.
  Range mapped = range("IPv4-mapped", "::ffff:0:0/96");
  Range nat64 = range("NAT64", "64:ff9b::/96");
  Range six_to_four = range("6to4", "2002::/16");
  Range teredo = range("Teredo", "2001::/32");
  // Forms no client needs: refused whatever they carry.
  Range compatible = range("deprecated IPv4-compatible", "::/96");
  Range translated = range("IPv4-translated", "::ffff:0:0:0/96");
  Range local_nat64 = range("local-use NAT64", "64:ff9b:1::/48");
  Range global_unicast = range("global unicast", "2000::/3");
};

const Ipv6Forms &ipv6_forms() {
  static const Ipv6Forms forms;
  return forms;
}

// What an IPv6 form says about the IPv4 address it carries: "wrapping 127.0.0.1, loopback
// 127.0.0.0/8", or nullopt for a public one.
std::optional<std::string> wrapped_special(std::string_view how, const std::uint8_t *four) {
  const IpAddress inner = ipv4(four);
  const auto inner_range = first_range(inner, ipv4_ranges());
  if (!inner_range) return std::nullopt;
  return std::string(how) + " " + inner.to_string() + ", " + *inner_range;
}

std::optional<std::string> ipv6_special_range(const IpAddress &address) {
  const Ipv6Forms &forms = ipv6_forms();
  const std::uint8_t *bytes = address.bytes.data();
  for (const Range *form : {&forms.mapped, &forms.nat64}) {
    if (in_range(address, *form)) {
      return wrapped_special(form->name + " wrapping", bytes + 12);
    }
  }
  if (in_range(address, forms.six_to_four)) {
    return wrapped_special(forms.six_to_four.name + " wrapping", bytes + 2);
  }
  if (in_range(address, forms.teredo)) {
    // The client's address is stored inverted, so that NATs rewriting addresses in
    // payloads leave it alone (RFC 4380).
    std::array<std::uint8_t, 4> client{};
    for (int i = 0; i < 4; ++i) client[i] = bytes[12 + i] ^ 0xff;
    if (auto special = wrapped_special(forms.teredo.name + " with client", client.data())) {
      return special;
    }
    return wrapped_special(forms.teredo.name + " with server", bytes + 4);
  }
  if (auto special = first_range(address, ipv6_ranges())) return special;
  for (const Range *form : {&forms.compatible, &forms.translated}) {
    if (in_range(address, *form)) {
      const IpAddress inner = ipv4(bytes + 12);
      const auto inner_range = first_range(inner, ipv4_ranges());
      return form->name + " wrapping " + inner.to_string() +
             (inner_range ? ", " + *inner_range : std::string());
    }
  }
  if (in_range(address, forms.local_nat64)) return forms.local_nat64.name;
  if (!in_range(address, forms.global_unicast)) {
    return "reserved (outside " + forms.global_unicast.name + ")";
  }
  return std::nullopt;
}

}  // namespace

std::string IpAddress::to_string() const {
  if (family == AF_INET) return ipv4_text(bytes.data());
  if (family == AF_INET6) return ipv6_text(*this);
  return "(no address)";
}

sockaddr_storage IpAddress::to_sockaddr(std::uint16_t port, socklen_t &length) const {
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

IpAddress IpAddress::from_sockaddr(const sockaddr *address) {
  if (address == nullptr) throw std::invalid_argument("IpAddress::from_sockaddr: no address");
  if (address->sa_family == AF_INET) {
    sockaddr_in in{};
    std::memcpy(&in, address, sizeof in);
    return ipv4(reinterpret_cast<const std::uint8_t *>(&in.sin_addr));
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

std::optional<IpAddress> parse_ip_literal(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text.front() == '[' || text.find(':') != std::string_view::npos) return parse_ipv6(text);
  return parse_ipv4(text);
}

std::optional<std::string> special_range(const IpAddress &address) {
  if (address.family == AF_INET) return first_range(address, ipv4_ranges());
  if (address.family == AF_INET6) return ipv6_special_range(address);
  return "no address (family " + std::to_string(address.family) + ")";
}

bool in_block(const IpAddress &address, const IpAddress &network, int prefix_length) {
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

std::optional<IpAddress> unmapped_ipv4(const IpAddress &address) {
  if (!is_mapped(address)) return std::nullopt;
  return ipv4(address.bytes.data() + 12);
}

}  // namespace sandbox_host::egress
