// The egress proxy's SOCKS5 entry (socks5.hpp): the greeting and CONNECT request as curl's
// socks5h:// sends them, taken at every length they can arrive in, each refusal with the
// reply code the client gets and the words naming what was wrong, and the bytes of the answers.
#include <sandbox_host/egress/proxy/socks5.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::egress {
namespace {

using namespace std::string_literals;
using AddressType = Socks5Request::AddressType;

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

std::string summary(const GreetingParse &g) {
  switch (g.state) {
    case ParseState::incomplete:
      return "incomplete";
    case ParseState::error:
      return "error: " + g.error;
    case ParseState::complete:
      break;
  }
  return "complete " + std::to_string(g.consumed) + (g.greeting.no_auth_offered ? " no-auth" : "");
}

std::string summary(const RequestParse5 &r) {
  switch (r.state) {
    case ParseState::incomplete:
      return "incomplete";
    case ParseState::error:
      return "error " + std::to_string(static_cast<int>(r.reply)) + ": " + r.error;
    case ParseState::complete:
      break;
  }
  return "complete " + std::to_string(r.consumed) + " " + r.request.host + " " +
         std::to_string(r.request.port) + " type " +
         std::to_string(static_cast<int>(r.request.type));
}

// Every prefix of message gives incomplete or what all of it gives.
template <typename Parse>
void expect_same_at_every_prefix(std::string_view message, Parse parse) {
  const std::string whole = summary(parse(message));
  for (std::size_t k = 0; k < message.size(); ++k) {
    const std::string part = summary(parse(message.substr(0, k)));
    if (part != "incomplete") {
      ASSERT_EQ(part, whole) << "after " << k << " bytes";
    }
  }
}

std::string connect_domain(std::string_view name, int port_high = 0x01, int port_low = 0xbb) {
  return bytes({5, 1, 0, 3, static_cast<int>(name.size())}) + std::string(name) +
         bytes({port_high, port_low});
}

// ---- greeting ----------------------------------------------------------------------------------

TEST(Socks5Greeting, OffersNoAuthentication) {
  for (const std::string &greeting :
       {bytes({5, 1, 0}), bytes({5, 2, 2, 0}), bytes({5, 3, 0x80, 0xfe, 0})}) {
    const GreetingParse g = parse_socks5_greeting(greeting + "trailing");
    ASSERT_EQ(g.state, ParseState::complete) << summary(g);
    EXPECT_EQ(g.consumed, greeting.size());
    EXPECT_TRUE(g.greeting.no_auth_offered);
    expect_same_at_every_prefix(greeting, parse_socks5_greeting);
    for (std::size_t k = 0; k < greeting.size(); ++k) {
      EXPECT_EQ(parse_socks5_greeting(greeting.substr(0, k)).state, ParseState::incomplete);
    }
  }
}

TEST(Socks5Greeting, WithoutNoAuthentication) {
  const GreetingParse g = parse_socks5_greeting(bytes({5, 2, 1, 2}));
  ASSERT_EQ(g.state, ParseState::complete) << summary(g);
  EXPECT_FALSE(g.greeting.no_auth_offered);
  EXPECT_EQ(g.consumed, 4u);
}

TEST(Socks5Greeting, AllMethods) {
  std::string greeting = bytes({5, 255});
  for (int m = 255; m >= 1; --m) greeting.push_back(static_cast<char>(m));
  EXPECT_EQ(summary(parse_socks5_greeting(greeting)), "complete 257");
  greeting.back() = 0;
  EXPECT_EQ(summary(parse_socks5_greeting(greeting)), "complete 257 no-auth");
}

TEST(Socks5Greeting, Refusals) {
  struct Case {
    std::string message, error;
  };
  for (const Case &c : std::vector<Case>{
           {bytes({4, 1, 0, 80}), "error: SOCKS4 is not supported; use socks5h://"},
           {"GET / HTTP/1.1\r\n", "error: not SOCKS5: version byte 71"},
           {bytes({0x16, 3, 1}), "error: not SOCKS5: version byte 22"},
           {bytes({5, 0}), "error: greeting offers no authentication method"},
           {bytes({5, 0, 0}), "error: greeting offers no authentication method"},
       }) {
    EXPECT_EQ(summary(parse_socks5_greeting(c.message)), c.error);
    expect_same_at_every_prefix(c.message, parse_socks5_greeting);
  }
  // Refused from the first byte on, without waiting for the rest.
  EXPECT_EQ(summary(parse_socks5_greeting(bytes({4}))),
            "error: SOCKS4 is not supported; use socks5h://");
}

TEST(Socks5Greeting, MethodSelection) {
  EXPECT_EQ(socks5_method_selection(true), bytes({5, 0}));
  EXPECT_EQ(socks5_method_selection(false), bytes({5, 0xff}));
}

// ---- request -----------------------------------------------------------------------------------

TEST(Socks5Request, ConnectToADomain) {
  const std::string message = connect_domain("example.com");
  const RequestParse5 r = parse_socks5_request(message + "first tunnel bytes");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(r.consumed, message.size());
  EXPECT_EQ(r.request.type, AddressType::domain);
  EXPECT_EQ(r.request.host, "example.com");
  EXPECT_EQ(r.request.port, 443);
  for (std::size_t k = 0; k < message.size(); ++k) {
    EXPECT_EQ(parse_socks5_request(message.substr(0, k)).state, ParseState::incomplete) << k;
  }
}

TEST(Socks5Request, DomainsAsSent) {
  // Case, a trailing dot, IDN bytes and IP-literal spellings are the allow list's to judge.
  for (const std::string &name :
       std::vector<std::string>{"Example.COM.", "xn--bcher-kva.example",
                                "b\xc3\xbc"
                                "cher.example",
                                "127.1", "[::1]", std::string(255, 'a')}) {
    const RequestParse5 r = parse_socks5_request(connect_domain(name, 0, 80));
    ASSERT_EQ(r.state, ParseState::complete) << summary(r);
    EXPECT_EQ(r.request.host, name);
    EXPECT_EQ(r.request.port, 80);
    EXPECT_EQ(r.consumed, 7 + name.size());
  }
}

TEST(Socks5Request, ConnectToAddresses) {
  const std::string v4 = bytes({5, 1, 0, 1, 127, 0, 0, 1, 0x1f, 0x90});
  RequestParse5 r = parse_socks5_request(v4);
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(r.request.type, AddressType::ipv4);
  EXPECT_EQ(r.request.host, "127.0.0.1");
  EXPECT_EQ(r.request.port, 8080);
  EXPECT_EQ(r.consumed, 10u);
  expect_same_at_every_prefix(v4, parse_socks5_request);

  const std::string v6 =
      bytes({5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff});
  r = parse_socks5_request(v6);
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(r.request.type, AddressType::ipv6);
  EXPECT_EQ(r.request.host, "2001:db8::1");
  EXPECT_EQ(r.request.port, 65535);
  EXPECT_EQ(r.consumed, 22u);
  expect_same_at_every_prefix(v6, parse_socks5_request);

  r = parse_socks5_request(
      bytes({5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1, 0, 22}));
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(r.request.host, "::ffff:127.0.0.1");
}

TEST(Socks5Request, Refusals) {
  struct Case {
    std::string message;
    Socks5Reply reply;
    std::string error;
  };
  const auto general = Socks5Reply::general_failure;
  for (const Case &c : std::vector<Case>{
           {bytes({4, 1, 0, 80, 127, 0, 0, 1, 0}), general,
            "SOCKS4 is not supported; use socks5h://"},
           {bytes({6, 1, 0, 1}), general, "not SOCKS5: version byte 6"},
           {bytes({5, 2, 0, 1, 0, 0, 0, 0, 0, 0}), Socks5Reply::command_not_supported,
            "BIND is not supported, only CONNECT"},
           {bytes({5, 3, 0, 1, 0, 0, 0, 0, 0, 0}), Socks5Reply::command_not_supported,
            "UDP ASSOCIATE is not supported, only CONNECT"},
           {bytes({5, 0, 0, 1}), Socks5Reply::command_not_supported,
            "unknown command 0, only CONNECT"},
           {bytes({5, 9, 0, 1}), Socks5Reply::command_not_supported,
            "unknown command 9, only CONNECT"},
           {bytes({5, 1, 1, 1, 127, 0, 0, 1, 0, 80}), general, "reserved byte is 1, not 0"},
           {bytes({5, 1, 0, 2, 127, 0, 0, 1, 0, 80}), Socks5Reply::address_type_not_supported,
            "unknown address type 2"},
           {bytes({5, 1, 0, 0}), Socks5Reply::address_type_not_supported, "unknown address type 0"},
           {bytes({5, 1, 0, 3, 0, 0, 80}), general, "domain name is empty"},
           {connect_domain("exa\0mple.com"s), general,
            "domain name holds control or space byte 0 at offset 3"},
           {connect_domain("example.com\nforged log line"), general,
            "domain name holds control or space byte 10 at offset 11"},
           {connect_domain("a b"), general,
            "domain name holds control or space byte 32 at offset 1"},
           {connect_domain("a\x7f"), general,
            "domain name holds control or space byte 127 at offset 1"},
           {connect_domain("example.com", 0, 0), general, "port is 0"},
           {bytes({5, 1, 0, 1, 10, 0, 0, 1, 0, 0}), general, "port is 0"},
       }) {
    SCOPED_TRACE(c.error);
    const RequestParse5 r = parse_socks5_request(c.message);
    ASSERT_EQ(r.state, ParseState::error) << summary(r);
    EXPECT_EQ(r.error, c.error);
    EXPECT_EQ(r.reply, c.reply);
    EXPECT_EQ(r.consumed, 0u);
    expect_same_at_every_prefix(c.message, parse_socks5_request);
  }
}

TEST(Socks5Request, RefusedAsSoonAsTheBadByteArrives) {
  EXPECT_EQ(summary(parse_socks5_request(bytes({5, 2}))),
            "error 7: BIND is not supported, only CONNECT");
  EXPECT_EQ(summary(parse_socks5_request(bytes({5, 1, 7}))), "error 1: reserved byte is 7, not 0");
  EXPECT_EQ(summary(parse_socks5_request(bytes({5, 1, 0, 5}))), "error 8: unknown address type 5");
  EXPECT_EQ(summary(parse_socks5_request(bytes({5, 1, 0, 3, 0}))), "error 1: domain name is empty");
}

// ---- replies -----------------------------------------------------------------------------------

TEST(Socks5Reply, CarriesTheCodeAndAnEmptyBoundAddress) {
  for (const auto reply :
       {Socks5Reply::succeeded, Socks5Reply::general_failure, Socks5Reply::not_allowed,
        Socks5Reply::network_unreachable, Socks5Reply::host_unreachable,
        Socks5Reply::connection_refused, Socks5Reply::ttl_expired,
        Socks5Reply::command_not_supported, Socks5Reply::address_type_not_supported}) {
    EXPECT_EQ(socks5_reply(reply), bytes({5, static_cast<int>(reply), 0, 1, 0, 0, 0, 0, 0, 0}));
  }
  EXPECT_EQ(socks5_reply(Socks5Reply::not_allowed), bytes({5, 2, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(socks5_reply(Socks5Reply::host_unreachable)[1], 4);
}

}  // namespace
}  // namespace sandbox_host::egress
