#include "http_target.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>

#include "http_grammar.hpp"

namespace sandbox_host::egress::http {
namespace {

bool is_host_char(char c) {
  return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_';
}

bool is_unreserved(char c) {
  return is_host_char(c) || c == '~';
}

void check_ipv6_literal(std::string_view literal, std::string_view what) {
  std::string_view address = literal;
  const auto percent = literal.find('%');
  if (percent != std::string_view::npos) {
    // RFC 6874: the zone id follows "%25", the percent sign percent-encoded.
    const std::string_view zone = literal.substr(percent);
    if (zone.substr(0, 3) != "%25" || zone.size() == 3 ||
        !std::all_of(zone.begin() + 3, zone.end(), is_unreserved)) {
      fail(std::string(what) + ": IPv6 zone id is not \"%25\" and a name");
    }
    address = literal.substr(0, percent);
  }
  std::array<unsigned char, 16> bytes{};
  if (::inet_pton(AF_INET6, std::string(address).c_str(), bytes.data()) != 1) {
    fail(std::string(what) + ": \"[...]\" holds no IPv6 address");
  }
}

std::uint16_t parse_port(std::string_view digits, std::string_view what) {
  if (digits.empty()) fail(std::string(what) + " has an empty port");
  if (!std::all_of(digits.begin(), digits.end(), is_digit)) {
    fail(std::string(what) + ": port is not a number");
  }
  unsigned long value = 0;
  for (char c : digits) {
    value = value * 10 + static_cast<unsigned long>(c - '0');
    if (value > 65535) break;
  }
  if (value == 0 || value > 65535) fail(std::string(what) + ": port is not in 1-65535");
  return static_cast<std::uint16_t>(value);
}

std::uint16_t default_port(std::string_view scheme) {
  if (scheme == "http") return 80;
  if (scheme == "https") return 443;
  return 0;
}

// The scheme of an absolute-form target ("scheme://..."), or nullopt when it has none.
std::optional<std::string_view> uri_scheme(std::string_view target) {
  const auto colon = target.find(':');
  if (colon == std::string_view::npos || colon == 0 || !is_alpha(target.front())) {
    return std::nullopt;
  }
  const std::string_view scheme = target.substr(0, colon);
  const bool valid = std::all_of(scheme.begin(), scheme.end(), [](char c) {
    return is_alpha(c) || is_digit(c) || c == '+' || c == '-' || c == '.';
  });
  if (!valid || target.substr(colon + 1, 2) != "//") return std::nullopt;
  return scheme;
}

}  // namespace

// host [":" port] of RFC 3986 without userinfo or percent-encoding: the host is passed on
// as the allow list will compare it.
Authority parse_authority(std::string_view text, std::string_view what) {
  if (text.find('@') != std::string_view::npos) {
    fail(std::string(what) + " holds userinfo (user@host): credentials in URLs are refused");
  }
  Authority authority;
  std::string_view rest;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) fail(std::string(what) + ": '[' without ']'");
    const std::string_view literal = text.substr(1, close - 1);
    check_ipv6_literal(literal, what);
    authority.host = std::string(literal);
    rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') {
      fail(std::string(what) + ": " + describe_byte(rest.front()) + " after ']'");
    }
  } else {
    const auto colon = text.find(':');
    const std::string_view host = text.substr(0, colon);
    if (colon != std::string_view::npos && text.find(':', colon + 1) != std::string_view::npos) {
      fail(std::string(what) + " has more than one ':' (an IPv6 address needs brackets)");
    }
    if (host.empty()) fail(std::string(what) + " has no host");
    const auto bad = std::find_if_not(host.begin(), host.end(), is_host_char);
    if (bad != host.end()) {
      fail(std::string(what) + ": host holds " + describe_byte(*bad) +
           " (letters, digits, '-', '.' and '_' only; IDNs as punycode)");
    }
    authority.host = std::string(host);
    rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon);
  }
  if (!rest.empty()) authority.port = parse_port(rest.substr(1), what);
  return authority;
}

void check_target_bytes(std::string_view target) {
  if (target.empty()) fail("request target is empty");
  for (std::size_t i = 0; i < target.size(); ++i) {
    const char c = target[i];
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      fail("control " + describe_byte(c) + " in the request target at offset " + std::to_string(i));
    }
    if (byte >= 0x80) {
      fail("non-ASCII " + describe_byte(c) + " in the request target at offset " +
           std::to_string(i) + "; percent-encode it");
    }
    if (c == '#') fail("request target holds a fragment ('#'), which clients do not send");
  }
}

void resolve_target(HttpRequestHead &head) {
  const std::string_view target = head.target;
  if (head.method == "CONNECT") {
    if (target.find('/') != std::string_view::npos) {
      fail("CONNECT's target is host:port (authority-form), not a URL or path");
    }
    const Authority authority = parse_authority(target, "CONNECT target");
    if (!authority.port) fail("CONNECT target has no port (host:port)");
    head.form = HttpRequestHead::Form::authority;
    head.host = authority.host;
    head.port = *authority.port;
    head.origin_target = head.target;
    return;
  }
  if (target == "*") {
    if (head.method != "OPTIONS") fail("the '*' target is for OPTIONS only");
    head.form = HttpRequestHead::Form::asterisk;
    head.origin_target = "*";
    return;
  }
  if (target.front() == '/') {
    head.form = HttpRequestHead::Form::origin;
    head.origin_target = head.target;
    return;
  }
  const auto scheme = uri_scheme(target);
  if (!scheme) {
    fail(
        "request target is neither origin-form (/path), absolute-form (http://host/path) "
        "nor '*'; host:port is for CONNECT only");
  }
  head.form = HttpRequestHead::Form::absolute;
  head.scheme = lowercase(*scheme);
  const std::string_view after_scheme = target.substr(scheme->size() + 3);
  const auto path_start = after_scheme.find_first_of("/?");
  const Authority authority =
      parse_authority(after_scheme.substr(0, path_start), "request target's authority");
  head.host = authority.host;
  head.port = authority.port.value_or(default_port(head.scheme));
  const std::string_view path =
      path_start == std::string_view::npos ? std::string_view() : after_scheme.substr(path_start);
  head.origin_target =
      path.empty() || path.front() == '?' ? "/" + std::string(path) : std::string(path);
}

// A request target longer than the limit, found in the request line as soon as that many
// bytes of it have arrived: the run after the first SP up to the next SP, CR or LF.
void check_target_length(std::string_view line, const HttpLimits &limits) {
  const auto space = line.find(' ');
  if (space == std::string_view::npos) return;
  const std::string_view after = line.substr(space + 1);
  const std::size_t run = std::min(after.find_first_of(" \r\n"), after.size());
  if (run > limits.max_target_bytes) {
    fail(414,
         "request target is longer than " + std::to_string(limits.max_target_bytes) + " bytes");
  }
}

}  // namespace sandbox_host::egress::http
