#include <sandbox_host/egress/destination/loopback_endpoint.hpp>

#include <algorithm>
#include <charconv>

namespace sandbox_host::egress {
namespace {

std::optional<std::uint16_t> decimal_port(std::string_view text) {
  if (text.empty() || text.size() > 5 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  unsigned value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  if (value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

bool loopback(const IpAddress &address) {
  static const IpAddress v4_loopback = *parse_ip_literal("127.0.0.0");
  static const IpAddress v6_loopback = *parse_ip_literal("::1");
  return address == v6_loopback || (address.family == AF_INET && in_block(address, v4_loopback, 8));
}

}  // namespace

std::string LoopbackEndpoint::to_string() const {
  const std::string host = address.to_string();
  return (address.family == AF_INET6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::optional<LoopbackEndpoint> LoopbackEndpoint::parse(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto port = decimal_port(text.substr(colon + 1));
  if (!port) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  const bool bracketed = host.size() > 2 && host.front() == '[' && host.back() == ']';
  if (bracketed) host = host.substr(1, host.size() - 2);
  if (host.find('%') != std::string_view::npos) return std::nullopt;
  const auto address = parse_ip_literal(host);
  if (!address || (address->family == AF_INET6) != bracketed) return std::nullopt;
  // IPv4 only as its four decimal parts: "127.1" or "0x7f.0.0.1" would read as a typo.
  if (address->family == AF_INET && address->to_string() != host) return std::nullopt;
  if (!loopback(*address)) return std::nullopt;
  return LoopbackEndpoint{*address, *port};
}

}  // namespace sandbox_host::egress
