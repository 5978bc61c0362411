// What a socks5h:// client sends the egress proxy (RFC 1928): the greeting and one CONNECT
// request, no authentication, names resolved by the proxy; and the proxy's two answers.
#pragma once

#include <sandbox_host/egress/proxy/http_message.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sandbox_host::egress {

enum class Socks5Reply : std::uint8_t {
  succeeded = 0,
  general_failure = 1,
  not_allowed = 2,
  network_unreachable = 3,
  host_unreachable = 4,
  connection_refused = 5,
  ttl_expired = 6,
  command_not_supported = 7,
  address_type_not_supported = 8
};

struct Socks5Greeting {
  bool no_auth_offered = false;  // the client offers method 0, the only one the proxy takes
};

struct GreetingParse {
  ParseState state = ParseState::incomplete;
  std::size_t consumed = 0;
  Socks5Greeting greeting;
  std::string error;
};

// VER 5, NMETHODS 1-255, the methods; at the start of what the client sent so far. A result
// other than incomplete does not change when more bytes arrive.
GreetingParse parse_socks5_greeting(std::string_view buffer);

// The method selection: 05 00 (no authentication) when accept, else 05 FF (none acceptable).
std::string socks5_method_selection(bool accept);

struct Socks5Request {
  enum class AddressType { ipv4, domain, ipv6 };

  // The domain as sent, or the IP address as inet_ntop writes it (IPv6 without brackets).
  std::string host;
  std::uint16_t port = 0;
  AddressType type = AddressType::domain;
};

struct RequestParse5 {
  ParseState state = ParseState::incomplete;
  std::size_t consumed = 0;
  Socks5Request request;
  std::string error;
  Socks5Reply reply = Socks5Reply::general_failure;  // what to answer when state is error
};

// The request after the method selection: CONNECT only (BIND and UDP ASSOCIATE get
// command_not_supported), RSV 0, a domain of 1-255 bytes without controls or spaces (a name
// with a newline would forge the proxy's log lines), port not 0.
RequestParse5 parse_socks5_request(std::string_view buffer);

// The reply, with BND.ADDR 0.0.0.0 and BND.PORT 0: the client learns nothing of the proxy's
// outbound address.
std::string socks5_reply(Socks5Reply reply);

}  // namespace sandbox_host::egress
