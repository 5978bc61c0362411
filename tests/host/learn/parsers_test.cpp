// The parsers of what a plugin sends: DNS questions, proxy requests, socket addresses. Every
// input is the plugin's, so the tests feed them truncations, lies and garbage.
#include <sandbox_host/host/learn/dns_question.hpp>
#include <sandbox_host/host/learn/proxy_request.hpp>
#include <sandbox_host/host/learn/socket_endpoint.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <cstring>
#include <random>
#include <string>

namespace sandbox_host::learn {
namespace {

std::string header(unsigned flags = 0x0100, unsigned questions = 1) {
  std::string out("\x12\x34", 2);
  out += static_cast<char>(flags >> 8);
  out += static_cast<char>(flags & 0xff);
  out += static_cast<char>(questions >> 8);
  out += static_cast<char>(questions & 0xff);
  out += std::string(6, '\0');
  return out;
}

std::string labels(const std::vector<std::string> &parts) {
  std::string out;
  for (const auto &part : parts) out += static_cast<char>(part.size()) + part;
  return out + std::string(1, '\0');
}

const std::string kTypeClass("\x00\x01\x00\x01", 4);

TEST(DnsQuestion, NamesTheFirstQuestionLowercase) {
  EXPECT_EQ(dns_question(header() + labels({"API", "Example", "com"}) + kTypeClass),
            "api.example.com");
  EXPECT_EQ(dns_question(header(0x0000, 2) + labels({"a"}) + kTypeClass + "trailing"), "a");
}

TEST(DnsQuestion, RefusesWhatIsNoQuery) {
  const std::string name = labels({"example", "com"});
  EXPECT_FALSE(dns_question(""));
  EXPECT_FALSE(dns_question(header().substr(0, 11)));
  EXPECT_FALSE(dns_question(header(0x8180) + name + kTypeClass)) << "a response";
  EXPECT_FALSE(dns_question(header(0x2800) + name + kTypeClass)) << "an update";
  EXPECT_FALSE(dns_question(header(0x0100, 0) + name + kTypeClass)) << "no question";
  EXPECT_FALSE(dns_question(header() + name)) << "no type and class";
  EXPECT_FALSE(dns_question(header() + labels({}) + kTypeClass)) << "the root alone";
  EXPECT_FALSE(dns_question(header() + std::string("\xc0\x0c", 2) + kTypeClass))
      << "a compression pointer";
  EXPECT_FALSE(dns_question(header() + std::string("\x05"
                                                   "ab",
                                                   3)))
      << "a label past the end";
  EXPECT_FALSE(dns_question(header() + labels({std::string(64, 'a')}) + kTypeClass));
  std::vector<std::string> many(200, "a");  // 400 bytes of name
  EXPECT_FALSE(dns_question(header() + labels(many) + kTypeClass));
  std::vector<std::string> fits(4, std::string(63, 'a'));  // 4 * 64 + 1 = 257 > 255
  EXPECT_FALSE(dns_question(header() + labels(fits) + kTypeClass));
}

TEST(DnsQuestion, SurvivesRandomBytes) {
  std::mt19937 random(42);
  for (int i = 0; i < 20000; ++i) {
    std::string bytes(random() % 600, '\0');
    for (auto &c : bytes) c = static_cast<char>(random());
    if (bytes.size() > 12 && i % 2 == 0) bytes.replace(0, 12, header());
    const auto name = dns_question(bytes);
    if (name) {
      EXPECT_LE(name->size(), 254u);
    }
  }
}

TEST(ProxyTarget, ReadsConnectAbsoluteFormAndSocks5) {
  auto target = [](std::string_view sent) {
    const auto t = proxy_target(sent);
    return t ? t->host + " " + std::to_string(t->port) : std::string("none");
  };
  EXPECT_EQ(target("CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com\r\n\r\n"),
            "api.example.com 443");
  EXPECT_EQ(target("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n"), "2001:db8::1 8443");
  EXPECT_EQ(target("GET http://example.org/path?q HTTP/1.1\r\n"), "example.org 80");
  EXPECT_EQ(target("POST https://u:p@example.org:8443/ HTTP/1.1\r\n"), "example.org 8443");
  EXPECT_EQ(target(std::string("\x05\x01\x00\x03\x0b"
                               "example.com\x01\xbb",
                               18)),
            "example.com 443");
  EXPECT_EQ(target(std::string("\x05\x01\x00\x01\xc0\x00\x02\x07\x00\x50", 10)), "192.0.2.7 80");
  EXPECT_EQ(target(std::string("\x05\x01\x00\x04\x20\x01\x0d\xb8", 8) + std::string(11, '\0') +
                   std::string("\x01\x01\xbb", 3)),
            "2001:0db8:0000:0000:0000:0000:0000:0001 443");

  for (const std::string &bad :
       {std::string(), std::string("CONNECT api.example.com HTTP/1.1\r\n"),
        std::string("CONNECT :443 HTTP/1.1\r\n"), std::string("CONNECT a:0 HTTP/1.1\r\n"),
        std::string("CONNECT a:70000 HTTP/1.1\r\n"), std::string("CONNECT [::1 HTTP/1.1\r\n"),
        std::string("GET /relative HTTP/1.1\r\n"), std::string("get http://a/ HTTP/1.1\r\n"),
        std::string("GET ftp://a/ HTTP/1.1\r\n"), std::string("\x05\x01\x00", 3),
        std::string("\x05\x01\x00\x03\x20"
                    "short\x00\x50",
                    12),
        std::string("\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x00", 10),
        std::string("\x16\x03\x01\x02\x00", 5), "CONNECT " + std::string(400, 'a') + ":443 x"}) {
    EXPECT_EQ(target(bad), "none") << bad;
  }
}

TEST(ParseSockaddr, ReadsEachFamilyAndRefusesShortOnes) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(53);
  ::inet_pton(AF_INET, "10.0.0.1", &in.sin_addr);
  const std::string in_bytes(reinterpret_cast<char *>(&in), sizeof in);
  EXPECT_EQ(parse_sockaddr(in_bytes)->describe(), "10.0.0.1:53");
  EXPECT_FALSE(parse_sockaddr(in_bytes.substr(0, 8)));

  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  in6.sin6_port = htons(443);
  ::inet_pton(AF_INET6, "::1", &in6.sin6_addr);
  const auto v6 = parse_sockaddr(std::string(reinterpret_cast<char *>(&in6), sizeof in6));
  EXPECT_EQ(v6->describe(), "[::1]:443");
  EXPECT_TRUE(v6->loopback());

  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  std::memcpy(un.sun_path, "\0abstract", 9);
  EXPECT_EQ(parse_sockaddr(std::string(reinterpret_cast<char *>(&un), 2 + 9))->describe(),
            "@abstract");
  std::memset(un.sun_path, 'x', sizeof un.sun_path);  // no NUL anywhere
  EXPECT_EQ(parse_sockaddr(std::string(reinterpret_cast<char *>(&un), sizeof un))->address.size(),
            sizeof un.sun_path);
  EXPECT_FALSE(parse_sockaddr(std::string(reinterpret_cast<char *>(&un), 2)));
  EXPECT_FALSE(parse_sockaddr(std::string("\x00\x00", 2)));  // AF_UNSPEC
  EXPECT_FALSE(parse_sockaddr(""));
}

}  // namespace
}  // namespace sandbox_host::learn
