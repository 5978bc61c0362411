#include <sandbox_host/host/learn/proxy_request.hpp>

#include <array>
#include <charconv>

namespace sandbox_host::learn {
namespace {

constexpr std::size_t kMaxAuthority = 300;  // a 253-byte name, brackets, a colon, a port

std::optional<std::uint16_t> parse_port(std::string_view text) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value == 0 ||
      value > 65535) {
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(value);
}

// "host:port", "[v6]:port", or "host" with default_port.
std::optional<ProxyTarget> parse_authority(std::string_view authority,
                                           std::optional<std::uint16_t> default_port) {
  if (authority.empty() || authority.size() > kMaxAuthority) return std::nullopt;
  ProxyTarget target;
  std::string_view port_text;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos || close == 1) return std::nullopt;
    target.host = std::string(authority.substr(1, close - 1));
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port_text = rest.substr(1);
    }
  } else {
    const auto colon = authority.rfind(':');
    target.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (target.host.empty()) return std::nullopt;
  for (const char c : target.host) {
    if (static_cast<unsigned char>(c) <= ' ' || c == '/' || c == '@' || c == 0x7f) {
      return std::nullopt;
    }
  }
  if (!port_text.empty() || !default_port) {
    const auto port = parse_port(port_text);
    if (!port) return std::nullopt;
    target.port = *port;
  } else {
    target.port = *default_port;
  }
  return target;
}

std::optional<ProxyTarget> http_target(std::string_view sent) {
  const auto line_end = sent.find("\r\n");
  const std::string_view line = sent.substr(0, line_end);
  const auto space = line.find(' ');
  if (space == std::string_view::npos || space == 0) return std::nullopt;
  const std::string_view method = line.substr(0, space);
  for (const char c : method) {
    if (c < 'A' || c > 'Z') return std::nullopt;
  }
  const std::string_view rest = line.substr(space + 1);
  const std::string_view uri = rest.substr(0, rest.find(' '));
  if (method == "CONNECT") return parse_authority(uri, std::nullopt);
  for (const auto &[scheme, port] : std::array{std::pair{std::string_view("http://"), 80},
                                               std::pair{std::string_view("https://"), 443}}) {
    if (uri.starts_with(scheme)) {
      std::string_view authority = uri.substr(scheme.size());
      authority = authority.substr(0, authority.find_first_of("/?#"));
      // Credentials before the host are the client's; the host follows the last '@'.
      if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
        authority = authority.substr(at + 1);
      }
      return parse_authority(authority, static_cast<std::uint16_t>(port));
    }
  }
  return std::nullopt;
}

// VER 5, CMD 1 (CONNECT), RSV 0, then the address by its type and the port (RFC 1928, 4).
std::optional<ProxyTarget> socks5_target(std::string_view sent) {
  auto byte = [&](std::size_t at) { return static_cast<unsigned char>(sent[at]); };
  if (sent.size() < 7 || byte(0) != 5 || byte(1) != 1 || byte(2) != 0) return std::nullopt;
  ProxyTarget target;
  std::size_t at = 4;
  switch (byte(3)) {
    case 1:  // IPv4
      if (sent.size() != at + 4 + 2) return std::nullopt;
      target.host = std::to_string(byte(4)) + "." + std::to_string(byte(5)) + "." +
                    std::to_string(byte(6)) + "." + std::to_string(byte(7));
      at += 4;
      break;
    case 3: {  // a name, its length first
      const std::size_t length = byte(4);
      if (length == 0 || sent.size() != at + 1 + length + 2) return std::nullopt;
      target.host = std::string(sent.substr(at + 1, length));
      at += 1 + length;
      break;
    }
    case 4: {  // IPv6: shown as eight groups, the proxy's parser reads any spelling
      if (sent.size() != at + 16 + 2) return std::nullopt;
      static constexpr char kHex[] = "0123456789abcdef";
      for (std::size_t group = 0; group < 8; ++group) {
        if (group != 0) target.host += ':';
        const unsigned value = byte(at + 2 * group) << 8 | byte(at + 2 * group + 1);
        target.host += kHex[(value >> 12) & 0xf];
        target.host += kHex[(value >> 8) & 0xf];
        target.host += kHex[(value >> 4) & 0xf];
        target.host += kHex[value & 0xf];
      }
      at += 16;
      break;
    }
    default:
      return std::nullopt;
  }
  const unsigned port = byte(at) << 8 | byte(at + 1);
  if (port == 0) return std::nullopt;
  target.port = static_cast<std::uint16_t>(port);
  return target;
}

}  // namespace

std::optional<ProxyTarget> proxy_target(std::string_view sent) {
  if (sent.empty()) return std::nullopt;
  if (static_cast<unsigned char>(sent.front()) == 5) return socks5_target(sent);
  return http_target(sent);
}

}  // namespace sandbox_host::learn
