// IP literals and special ranges (ip_address.hpp): every spelling of an address made the same
// canonical address (checked against inet_aton and inet_pton), RFC 5952 text, sockaddrs
// through the kernel, each special-purpose range by name, and the IPv6 forms that wrap an
// IPv4 address unwrapped and judged.
#include <sandbox_host/egress/destination/ip_address.hpp>

#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace sandbox_host::egress {
namespace {

IpAddress address(std::string_view text) {
  const auto parsed = parse_ip_literal(text);
  if (!parsed) throw std::invalid_argument("test address does not parse: " + std::string(text));
  return *parsed;
}

// What the C library makes of an IPv4 spelling, independently of the code under test.
IpAddress inet_aton_address(const std::string &text) {
  in_addr parsed{};
  if (::inet_aton(text.c_str(), &parsed) == 0) {
    throw std::invalid_argument("inet_aton refuses " + text);
  }
  IpAddress ip{AF_INET, {}};
  std::memcpy(ip.bytes.data(), &parsed, 4);
  return ip;
}

IpAddress inet_pton6_address(const std::string &text) {
  IpAddress ip{AF_INET6, {}};
  if (::inet_pton(AF_INET6, text.c_str(), ip.bytes.data()) != 1) {
    throw std::invalid_argument("inet_pton refuses " + text);
  }
  return ip;
}

// An IPv6 address made of prefix with the IPv4 address inner written at byte offset.
IpAddress wrap(std::string_view prefix, std::string_view inner, int offset) {
  IpAddress outer = address(prefix);
  const IpAddress v4 = address(inner);
  std::memcpy(outer.bytes.data() + offset, v4.bytes.data(), 4);
  return outer;
}

// A Teredo address (RFC 4380): the server's IPv4 address in bits 32-63, the client's in the
// last 32 bits, inverted.
IpAddress teredo(std::string_view server, std::string_view client) {
  IpAddress outer = wrap("2001::", server, 4);
  const IpAddress v4 = address(client);
  for (int i = 0; i < 4; ++i) outer.bytes[12 + i] = v4.bytes[i] ^ 0xff;
  return outer;
}

// ---- parse_ip_literal: IPv4 ---------------------------------------------------------------

TEST(ParseIpLiteral, EverySpellingOfLoopbackIsTheSameAddress) {
  const IpAddress expected = inet_pton6_address("::ffff:127.0.0.1");
  IpAddress loopback{AF_INET, {}};
  std::memcpy(loopback.bytes.data(), expected.bytes.data() + 12, 4);
  for (const std::string spelling :
       {"127.0.0.1", "127.1", "127.0.1", "0x7f.0.0.1", "0X7F.1", "0x7f.0x0.0x0.0x1", "0177.0.0.1",
        "0177.1", "0177.0.0.01", "2130706433", "0x7f000001", "017700000001", "127.0.0x0.1"}) {
    SCOPED_TRACE(spelling);
    const auto parsed = parse_ip_literal(spelling);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, loopback);
    EXPECT_EQ(*parsed, inet_aton_address(spelling));
    EXPECT_EQ(parsed->to_string(), "127.0.0.1");
    EXPECT_EQ(parsed->family, AF_INET);
  }
}

TEST(ParseIpLiteral, TakesWhatInetAtonTakesForOtherAddresses) {
  for (const std::string spelling :
       {"1.2.3.4", "16909060", "0x01020304", "1.131844", "1.2.772", "0.0.0.0", "0",
        "255.255.255.255", "0xffffffff", "037777777777", "10.0xff.0377.255", "8.8.8.8"}) {
    SCOPED_TRACE(spelling);
    const auto parsed = parse_ip_literal(spelling);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, inet_aton_address(spelling));
    EXPECT_EQ(address(parsed->to_string()), *parsed);
  }
}

TEST(ParseIpLiteral, TakesOneTrailingDotAsANameDoes) {
  EXPECT_EQ(address("127.0.0.1."), address("127.0.0.1"));
  EXPECT_EQ(address("127.1."), address("127.0.0.1"));
  EXPECT_FALSE(parse_ip_literal("127.0.0.1.."));
}

TEST(ParseIpLiteral, RefusesWhatIsNoAddress) {
  for (const std::string text : {"",
                                 "github.com",
                                 "localhost",
                                 "1.2.3.4.5",
                                 "256.0.0.1",
                                 "1.2.3.256",
                                 "1.2.65536",
                                 "4294967296",
                                 "0x100000000",
                                 "1..2.3",
                                 ".1.2.3",
                                 "08.0.0.1",
                                 "0x",
                                 "0x.1",
                                 "1.0x",
                                 "127.0.0.1 foo",
                                 " 127.0.0.1",
                                 "127.0.0.1\n",
                                 "127.0.0.1/8",
                                 "-1",
                                 "+1.2.3.4",
                                 "127.0.0.1:80",
                                 "[127.0.0.1]",
                                 "1.2.3.4%eth0",
                                 "0x7f.0.0.1x",
                                 "deadbeef",
                                 "1e2.0.0.1"}) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(parse_ip_literal(text).has_value());
  }
}

// ---- parse_ip_literal: IPv6 ---------------------------------------------------------------

TEST(ParseIpLiteral, TakesIpv6WithAndWithoutBrackets) {
  const IpAddress loopback = inet_pton6_address("::1");
  for (const std::string spelling :
       {"::1", "[::1]", "0:0:0:0:0:0:0:1", "[0000:0000:0000:0000:0000:0000:0000:0001]", "::0:1",
        "0::1"}) {
    SCOPED_TRACE(spelling);
    const auto parsed = parse_ip_literal(spelling);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, loopback);
    EXPECT_EQ(parsed->family, AF_INET6);
    EXPECT_EQ(parsed->to_string(), "::1");
  }
}

TEST(ParseIpLiteral, DropsTheZoneId) {
  const IpAddress link_local = inet_pton6_address("fe80::1");
  for (const std::string spelling :
       {"fe80::1%eth0", "[fe80::1%eth0]", "[fe80::1%25eth0]", "fe80::1%1", "[FE80::1%25en0]"}) {
    SCOPED_TRACE(spelling);
    const auto parsed = parse_ip_literal(spelling);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, link_local);
    EXPECT_EQ(parsed->to_string(), "fe80::1");
  }
}

TEST(ParseIpLiteral, TakesIpv4MappedSpellings) {
  const IpAddress mapped = inet_pton6_address("::ffff:127.0.0.1");
  for (const std::string spelling :
       {"::ffff:127.0.0.1", "[::ffff:127.0.0.1]", "::ffff:7f00:1", "0:0:0:0:0:FFFF:7F00:0001"}) {
    SCOPED_TRACE(spelling);
    EXPECT_EQ(address(spelling), mapped);
  }
}

TEST(ParseIpLiteral, RefusesBrokenIpv6) {
  for (const std::string text :
       {"[::1", "::1]", "[]", "[::1]:443", "::1::2", "1:2:3:4:5:6:7:8:9", "12345::1", "::g",
        "fe80::1%", "[fe80::1%]", "[fe80::1%25]", "fe80::1%eth 0", "fe80::1%eth/0", ":::1",
        "::ffff:0177.0.0.1", "::ffff:127.1", "[[::1]]"}) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(parse_ip_literal(text).has_value());
  }
}

// ---- to_string ----------------------------------------------------------------------------

TEST(IpAddressText, IsRfc5952) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"},
      {"2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},     // the first of two equal runs
      {"2001:0:0:1:0:0:0:1", "2001:0:0:1::1"},           // the longest run
      {"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"},  // one zero word stays
      {"1:0:0:0:0:0:0:0", "1::"},
      {"0:0:0:0:0:0:0:0", "::"},
      {"FE80::ABCD:00EF", "fe80::abcd:ef"},
      {"::ffff:7f00:1", "::ffff:127.0.0.1"},  // mapped: dotted, as RFC 5952 section 5 says
      {"::7f00:1", "::7f00:1"},               // compatible: hex, unlike glibc's inet_ntop
      {"64:ff9b::808:808", "64:ff9b::808:808"},
      {"1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"},
  };
  for (const auto &[input, canonical] : cases) {
    SCOPED_TRACE(input);
    const IpAddress parsed = address(input);
    EXPECT_EQ(parsed.to_string(), canonical);
    EXPECT_EQ(address(parsed.to_string()), parsed);
  }
}

// ---- sockaddr -----------------------------------------------------------------------------

TEST(IpAddressSockaddr, MakesSockaddrsWithThePort) {
  socklen_t length = 0;
  const sockaddr_storage v4 = address("10.1.2.3").to_sockaddr(8443, length);
  ASSERT_EQ(length, sizeof(sockaddr_in));
  sockaddr_in in{};
  std::memcpy(&in, &v4, sizeof in);
  EXPECT_EQ(in.sin_family, AF_INET);
  EXPECT_EQ(ntohs(in.sin_port), 8443);
  char text[INET_ADDRSTRLEN];
  EXPECT_STREQ(::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text), "10.1.2.3");

  const sockaddr_storage v6 = address("2001:db8::7").to_sockaddr(443, length);
  ASSERT_EQ(length, sizeof(sockaddr_in6));
  sockaddr_in6 in6{};
  std::memcpy(&in6, &v6, sizeof in6);
  EXPECT_EQ(in6.sin6_family, AF_INET6);
  EXPECT_EQ(ntohs(in6.sin6_port), 443);
  char text6[INET6_ADDRSTRLEN];
  EXPECT_STREQ(::inet_ntop(AF_INET6, &in6.sin6_addr, text6, sizeof text6), "2001:db8::7");
}

TEST(IpAddressSockaddr, RoundTripsThroughTheKernel) {
  for (const std::string text : {"127.0.0.1", "::1"}) {
    SCOPED_TRACE(text);
    const IpAddress loopback = address(text);
    UniqueFd socket_fd(::socket(loopback.family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    ASSERT_TRUE(socket_fd) << std::strerror(errno);
    socklen_t length = 0;
    const sockaddr_storage bound = loopback.to_sockaddr(0, length);
    if (::bind(socket_fd.get(), reinterpret_cast<const sockaddr *>(&bound), length) != 0) {
      if (loopback.family == AF_INET6) GTEST_SKIP() << "no IPv6 loopback here";
      FAIL() << "bind " << text << ": " << std::strerror(errno);
    }
    sockaddr_storage name{};
    socklen_t name_length = sizeof name;
    ASSERT_EQ(::getsockname(socket_fd.get(), reinterpret_cast<sockaddr *>(&name), &name_length), 0);
    EXPECT_EQ(IpAddress::from_sockaddr(reinterpret_cast<const sockaddr *>(&name)), loopback);
  }
}

TEST(IpAddressSockaddr, RefusesOtherFamilies) {
  sockaddr unix_address{};
  unix_address.sa_family = AF_UNIX;
  try {
    IpAddress::from_sockaddr(&unix_address);
    ADD_FAILURE() << "AF_UNIX taken";
  } catch (const std::invalid_argument &e) {
    EXPECT_EQ(std::string(e.what()), "IpAddress::from_sockaddr: address family " +
                                         std::to_string(AF_UNIX) +
                                         " is neither AF_INET nor AF_INET6");
  }
  EXPECT_THROW(IpAddress::from_sockaddr(nullptr), std::invalid_argument);
  socklen_t length = 0;
  EXPECT_THROW(IpAddress{}.to_sockaddr(80, length), std::logic_error);
}

// ---- special_range ------------------------------------------------------------------------

TEST(SpecialRange, NamesEveryIpv4Range) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"0.0.0.0", "unspecified 0.0.0.0"},
      {"0.1.2.3", "this network 0.0.0.0/8"},
      {"10.0.0.1", "private 10.0.0.0/8"},
      {"10.255.255.255", "private 10.0.0.0/8"},
      {"100.64.0.0", "CGNAT 100.64.0.0/10"},
      {"100.127.255.255", "CGNAT 100.64.0.0/10"},
      {"127.0.0.1", "loopback 127.0.0.0/8"},
      {"127.255.255.254", "loopback 127.0.0.0/8"},
      {"169.254.169.254", "link-local 169.254.0.0/16"},
      {"172.16.0.1", "private 172.16.0.0/12"},
      {"172.31.255.255", "private 172.16.0.0/12"},
      {"192.0.0.9", "IETF protocol assignments 192.0.0.0/24"},
      {"192.0.2.1", "documentation 192.0.2.0/24"},
      {"192.88.99.1", "deprecated 6to4 relay anycast 192.88.99.0/24"},
      {"192.168.1.1", "private 192.168.0.0/16"},
      {"198.18.0.1", "benchmarking 198.18.0.0/15"},
      {"198.19.255.255", "benchmarking 198.18.0.0/15"},
      {"198.51.100.1", "documentation 198.51.100.0/24"},
      {"203.0.113.1", "documentation 203.0.113.0/24"},
      {"224.0.0.1", "multicast 224.0.0.0/4"},
      {"239.255.255.250", "multicast 224.0.0.0/4"},
      {"240.0.0.1", "reserved 240.0.0.0/4"},
      {"255.255.255.254", "reserved 240.0.0.0/4"},
      {"255.255.255.255", "broadcast 255.255.255.255"},
  };
  for (const auto &[text, name] : cases) {
    SCOPED_TRACE(text);
    EXPECT_EQ(special_range(address(text)).value_or("(public)"), name);
  }
}

TEST(SpecialRange, NamesEveryIpv6Range) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"::", "unspecified ::"},
      {"::1", "loopback ::1"},
      {"100::1", "discard-only 100::/64"},
      {"2001:2::1", "benchmarking 2001:2::/48"},
      {"2001:10::1", "IETF protocol assignments 2001::/23"},
      {"2001:1ff::1", "IETF protocol assignments 2001::/23"},
      {"2001:db8::1", "documentation 2001:db8::/32"},
      {"3fff::1", "documentation 3fff::/20"},
      {"5f00::1", "SRv6 SIDs 5f00::/16"},
      {"fc00::1", "unique local fc00::/7"},
      {"fd12:3456::1", "unique local fc00::/7"},
      {"fe80::1", "link-local fe80::/10"},
      {"febf:ffff::1", "link-local fe80::/10"},
      {"fec0::1", "deprecated site-local fec0::/10"},
      {"ff02::1", "multicast ff00::/8"},
      {"64:ff9b:1::808:808", "local-use NAT64 64:ff9b:1::/48"},
      {"4000::1", "reserved (outside global unicast 2000::/3)"},
      {"fe00::1", "reserved (outside global unicast 2000::/3)"},
      {"::8.8.8.8", "deprecated IPv4-compatible ::/96 wrapping 8.8.8.8"},
      {"::ffff:0:808:808", "IPv4-translated ::ffff:0:0:0/96 wrapping 8.8.8.8"},
  };
  for (const auto &[text, name] : cases) {
    SCOPED_TRACE(text);
    EXPECT_EQ(special_range(address(text)).value_or("(public)"), name);
  }
}

TEST(SpecialRange, UnwrapsIpv4InIpv6AndNamesBoth) {
  const std::vector<std::pair<std::string, std::string>> inners{
      {"127.0.0.1", "loopback 127.0.0.0/8"},
      {"10.0.0.1", "private 10.0.0.0/8"},
      {"169.254.169.254", "link-local 169.254.0.0/16"},
  };
  for (const auto &[inner, inner_name] : inners) {
    SCOPED_TRACE(inner);
    const std::string carried = inner + ", " + inner_name;
    EXPECT_EQ(special_range(wrap("::ffff:0:0", inner, 12)),
              "IPv4-mapped ::ffff:0:0/96 wrapping " + carried);
    EXPECT_EQ(special_range(wrap("64:ff9b::", inner, 12)),
              "NAT64 64:ff9b::/96 wrapping " + carried);
    EXPECT_EQ(special_range(wrap("2002::", inner, 2)), "6to4 2002::/16 wrapping " + carried);
    EXPECT_EQ(special_range(teredo("8.8.4.4", inner)), "Teredo 2001::/32 with client " + carried);
    EXPECT_EQ(special_range(teredo(inner, "8.8.4.4")), "Teredo 2001::/32 with server " + carried);
    EXPECT_EQ(special_range(wrap("::", inner, 12)),
              "deprecated IPv4-compatible ::/96 wrapping " + carried);
    EXPECT_EQ(special_range(wrap("::ffff:0:0:0", inner, 12)),
              "IPv4-translated ::ffff:0:0:0/96 wrapping " + carried);
  }
  // The same, spelt as a client would.
  EXPECT_EQ(special_range(address("[::ffff:127.0.0.1]")),
            "IPv4-mapped ::ffff:0:0/96 wrapping 127.0.0.1, loopback 127.0.0.0/8");
  EXPECT_EQ(special_range(address("64:ff9b::10.0.0.1")),
            "NAT64 64:ff9b::/96 wrapping 10.0.0.1, private 10.0.0.0/8");
  EXPECT_EQ(special_range(address("2002:7f00:1::1")),
            "6to4 2002::/16 wrapping 127.0.0.1, loopback 127.0.0.0/8");
}

TEST(SpecialRange, ReadsTeredoAsRfc4380WritesIt) {
  // RFC 4380's layout, as in the usual example: server 65.54.227.120, client 192.0.2.45
  // (0x3ffffdd2 inverted), port 40000.
  EXPECT_EQ(special_range(address("2001:0:4136:e378:8000:63bf:3fff:fdd2")),
            "Teredo 2001::/32 with client 192.0.2.45, documentation 192.0.2.0/24");
  EXPECT_EQ(special_range(address("2001:0:4136:e378:8000:63bf:80ff:fffe")),
            "Teredo 2001::/32 with client 127.0.0.1, loopback 127.0.0.0/8");
}

TEST(SpecialRange, PassesPublicAddresses) {
  for (const std::string text :
       {"8.8.8.8",           "1.1.1.1",         "9.255.255.255",   "11.0.0.0",
        "100.63.255.255",    "100.128.0.0",     "126.255.255.255", "128.0.0.0",
        "169.253.255.255",   "172.15.255.255",  "172.32.0.0",      "192.0.1.255",
        "192.0.3.0",         "192.167.255.255", "192.169.0.0",     "198.17.255.255",
        "198.20.0.0",        "223.255.255.255", "2606:4700::1111", "2001:4860:4860::8888",
        "2a00:1450:4001::1", "2001:200::1",     "::ffff:8.8.8.8",  "64:ff9b::8.8.8.8",
        "2002:808:808::1"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(special_range(address(text)).value_or("(public)"), "(public)");
  }
  EXPECT_EQ(special_range(teredo("8.8.4.4", "8.8.8.8")).value_or("(public)"), "(public)");
}

TEST(SpecialRange, RefusesAnAddressWithoutFamily) {
  EXPECT_TRUE(special_range(IpAddress{}).has_value());
}

// ---- in_block and unmapped_ipv4 -----------------------------------------------------------

TEST(InBlock, ComparesThePrefixBitsOnly) {
  EXPECT_TRUE(in_block(address("10.1.255.3"), address("10.1.0.0"), 16));
  EXPECT_FALSE(in_block(address("10.2.0.0"), address("10.1.0.0"), 16));
  EXPECT_TRUE(in_block(address("100.127.0.1"), address("100.64.0.0"), 10));
  EXPECT_FALSE(in_block(address("100.128.0.1"), address("100.64.0.0"), 10));
  EXPECT_TRUE(in_block(address("8.8.8.8"), address("0.0.0.0"), 0));
  EXPECT_TRUE(in_block(address("::1"), address("::1"), 128));
  EXPECT_FALSE(in_block(address("::2"), address("::1"), 128));
  EXPECT_FALSE(in_block(address("::ffff:10.0.0.1"), address("10.0.0.0"), 8));
  EXPECT_THROW(in_block(address("10.0.0.1"), address("10.0.0.0"), 33), std::invalid_argument);
  EXPECT_THROW(in_block(address("::1"), address("::"), 129), std::invalid_argument);
  EXPECT_THROW(in_block(address("::1"), address("::"), -1), std::invalid_argument);
}

TEST(UnmappedIpv4, UnwrapsOnlyIpv4Mapped) {
  EXPECT_EQ(unmapped_ipv4(address("::ffff:127.0.0.1")), address("127.0.0.1"));
  EXPECT_FALSE(unmapped_ipv4(address("::127.0.0.1")).has_value());
  EXPECT_FALSE(unmapped_ipv4(address("64:ff9b::127.0.0.1")).has_value());
  EXPECT_FALSE(unmapped_ipv4(address("127.0.0.1")).has_value());
}

}  // namespace
}  // namespace sandbox_host::egress
