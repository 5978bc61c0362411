// The Authorization rule (authorization.hpp): Basic with GitHub's token user for git's
// endpoint on github.com, "token" for every other host, decoded here with Poco's Base64
// (another implementation than the one that encoded it), and tokens that would break the
// header refused without being named.
#include <sandbox_host/egress/proxy/authorization.hpp>

#include <Poco/Base64Decoder.h>
#include <gtest/gtest.h>

#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace sandbox_host::egress {
namespace {

std::string base64_decoded(const std::string &encoded) {
  std::istringstream in(encoded);
  Poco::Base64Decoder decoder(in);
  return std::string(std::istreambuf_iterator<char>(decoder), {});
}

// The Basic credentials of header, decoded; fails the test when it is not Basic.
std::string basic_credentials(const std::string &header) {
  const std::string scheme = "Basic ";
  EXPECT_EQ(header.substr(0, scheme.size()), scheme) << header;
  return base64_decoded(header.substr(scheme.size()));
}

TEST(Authorization, GitsEndpointOnGithubComTakesBasicWithTheTokenUser) {
  EXPECT_EQ(basic_credentials(authorization("github.com", "ghu_abc123")),
            "x-access-token:ghu_abc123");
}

TEST(Authorization, TheBasicEncodingHoldsForEveryPaddingLength) {
  // "x-access-token:" is 15 bytes: tokens of 1, 2 and 3 bytes end on each padding case.
  for (const std::string token : {"a", "ab", "abc", "ghs_16C7e42F292c6912E7710c838347Ae178B4a"}) {
    EXPECT_EQ(basic_credentials(authorization("github.com", token)), "x-access-token:" + token);
  }
}

TEST(Authorization, TheHostIsComparedWithoutCaseAndOneTrailingDot) {
  EXPECT_EQ(basic_credentials(authorization("GitHub.COM", "t0k")), "x-access-token:t0k");
  EXPECT_EQ(basic_credentials(authorization("github.com.", "t0k")), "x-access-token:t0k");
  EXPECT_EQ(authorization("github.com..", "t0k"), "token t0k");
}

TEST(Authorization, EveryOtherHostTakesTheTokenScheme) {
  EXPECT_EQ(authorization("api.github.com", "ghu_abc123"), "token ghu_abc123");
  EXPECT_EQ(authorization("uploads.github.com", "ghu_abc123"), "token ghu_abc123");
  // Names that merely contain or resemble github.com are other hosts.
  EXPECT_EQ(authorization("evilgithub.com", "x"), "token x");
  EXPECT_EQ(authorization("github.com.evil.example", "x"), "token x");
  EXPECT_EQ(authorization("github.co", "x"), "token x");
  EXPECT_EQ(authorization("", "x"), "token x");
}

TEST(Authorization, ATokenThatWouldBreakTheHeaderIsRefusedWithoutNamingIt) {
  for (const std::string &token :
       std::vector<std::string>{"secret\r\nX-Injected: 1", "secret\nmore", "two words",
                                std::string("nul\0x", 5), "tab\there", "del\x7f"}) {
    for (const char *host : {"github.com", "api.github.com"}) {
      try {
        authorization(host, token);
        ADD_FAILURE() << "accepted a token with a separator for " << host;
      } catch (const std::invalid_argument &error) {
        const std::string message = error.what();
        EXPECT_EQ(message.find(token), std::string::npos) << message;
        EXPECT_NE(message.find(host), std::string::npos) << message;
      }
    }
  }
}

TEST(Authorization, NoTokenIsRefused) {
  EXPECT_THROW(authorization("github.com", ""), std::invalid_argument);
  EXPECT_THROW(authorization("api.github.com", ""), std::invalid_argument);
}

}  // namespace
}  // namespace sandbox_host::egress
