// The special-purpose ranges (ip_address.hpp): IANA's special-purpose address registries, plus
// multicast, the IPv6 forms that carry an IPv4 address, and IPv6 outside the global unicast block.
#include <sandbox_host/egress/destination/ip_address.hpp>

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace sandbox_host::egress {
namespace {

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
  const IpAddress inner = ip::detail::ipv4(four);
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
      const IpAddress inner = ip::detail::ipv4(bytes + 12);
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

std::optional<std::string> special_range(const IpAddress &address) {
  if (address.family == AF_INET) return first_range(address, ipv4_ranges());
  if (address.family == AF_INET6) return ipv6_special_range(address);
  return "no address (family " + std::to_string(address.family) + ")";
}

}  // namespace sandbox_host::egress
