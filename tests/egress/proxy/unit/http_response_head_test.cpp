// The egress proxy's parser of response heads (http_message.hpp): heads taken apart the way
// an upstream sends them, which responses have a body, interim responses, and every refusal
// the same however the bytes arrive.
#include "http_head_summary.hpp"

#include <sandbox_host/egress/proxy/http_message.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::egress {
namespace {

using namespace http_test;

void expect_response_refused(std::string_view text, std::string_view words,
                             std::string_view method = "GET", const HttpLimits &limits = {}) {
  SCOPED_TRACE(std::string(text));
  const std::string whole = summary(response(text, method, limits));
  EXPECT_EQ(whole.substr(0, 10), "error 502:") << whole;
  EXPECT_NE(whole.find(words), std::string::npos) << whole << " does not say " << words;
  for (std::size_t k = 0; k < text.size(); ++k) {
    const std::string part = summary(response(text.substr(0, k), method, limits));
    if (part != "incomplete") {
      ASSERT_EQ(part, whole) << "after " << k << " bytes";
    }
  }
}

TEST(ParseResponseHead, WithContentLength) {
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: x\r\n\r\n";
  const ResponseParse r = response(head + "hello");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(r.consumed, head.size());
  EXPECT_EQ(r.head.minor_version, 1);
  EXPECT_EQ(r.head.status, 200);
  EXPECT_EQ(r.head.reason, "OK");
  EXPECT_EQ(r.head.framing, BodyFraming::content_length);
  EXPECT_EQ(r.head.content_length, 5u);
  EXPECT_TRUE(r.head.keep_alive);
  ASSERT_NE(r.head.header("server"), nullptr);
  EXPECT_EQ(*r.head.header("server"), "x");
}

TEST(ParseResponseHead, WhichResponsesHaveABody) {
  struct Case {
    std::string method, status_line, headers;
    BodyFraming framing;
    bool keep_alive;
  };
  const std::string length = "Content-Length: 10\r\n";
  const std::string chunked = "Transfer-Encoding: chunked\r\n";
  for (const Case &c : std::vector<Case>{
           {"GET", "HTTP/1.1 200 OK", chunked, BodyFraming::chunked, true},
           {"GET", "HTTP/1.1 200 OK", "", BodyFraming::until_close, false},
           {"GET", "HTTP/1.0 200 OK", "", BodyFraming::until_close, false},
           {"GET", "HTTP/1.0 200 OK", length, BodyFraming::content_length, false},
           {"GET", "HTTP/1.0 200 OK", length + "Connection: keep-alive\r\n",
            BodyFraming::content_length, true},
           {"GET", "HTTP/1.1 200 OK", length + "Connection: close\r\n", BodyFraming::content_length,
            false},
           {"HEAD", "HTTP/1.1 200 OK", length, BodyFraming::none, true},
           {"HEAD", "HTTP/1.1 200 OK", chunked, BodyFraming::none, true},
           {"HEAD", "HTTP/1.1 200 OK", "", BodyFraming::none, true},
           {"GET", "HTTP/1.1 204 No Content", "", BodyFraming::none, true},
           {"GET", "HTTP/1.1 304 Not Modified", length, BodyFraming::none, true},
           {"GET", "HTTP/1.1 100 Continue", "", BodyFraming::none, true},
           {"GET", "HTTP/1.1 101 Switching Protocols", "Upgrade: x\r\n", BodyFraming::none, true},
           {"CONNECT", "HTTP/1.1 200 Connection established", "", BodyFraming::none, true},
           {"CONNECT", "HTTP/1.1 407 Proxy Authentication Required", length,
            BodyFraming::content_length, true},
           {"CONNECT", "HTTP/1.1 502 Bad Gateway", "", BodyFraming::until_close, false},
           {"GET", "HTTP/1.1 404 Not Found", length, BodyFraming::content_length, true},
       }) {
    SCOPED_TRACE(c.method + " " + c.status_line + " " + c.headers);
    const ResponseParse r = response(c.status_line + "\r\n" + c.headers + "\r\n", c.method);
    ASSERT_EQ(r.state, ParseState::complete) << summary(r);
    EXPECT_EQ(r.head.framing, c.framing);
    EXPECT_EQ(r.head.content_length, c.framing == BodyFraming::content_length ? 10u : 0u);
    EXPECT_EQ(r.head.keep_alive, c.keep_alive);
  }
}

TEST(ParseResponseHead, ReasonPhrase) {
  EXPECT_EQ(response("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n").head.reason, "");
  EXPECT_EQ(response("HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n").head.reason, "");
  EXPECT_EQ(response("HTTP/1.1 404 Not  Found\t!\r\nContent-Length: 0\r\n\r\n").head.reason,
            "Not  Found\t!");
  EXPECT_EQ(response("HTTP/1.1 200 caf\xc3\xa9\r\nContent-Length: 0\r\n\r\n").head.reason,
            "caf\xc3\xa9");
}

TEST(ParseResponseHead, InterimResponsesComeOneAtATime) {
  const std::string interim = "HTTP/1.1 100 Continue\r\n\r\n";
  const std::string final = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n";
  const ResponseParse first = response(interim + final + "ok");
  ASSERT_EQ(first.state, ParseState::complete);
  EXPECT_EQ(first.head.status, 100);
  EXPECT_EQ(first.consumed, interim.size());
  const ResponseParse second =
      response(std::string_view(interim + final + "ok").substr(first.consumed));
  ASSERT_EQ(second.state, ParseState::complete);
  EXPECT_EQ(second.head.status, 200);
  EXPECT_EQ(second.consumed, final.size());
}

TEST(ParseResponseHead, Refusals) {
  expect_response_refused(
      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
      "both Content-Length and Transfer-Encoding");
  expect_response_refused("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
                          "Transfer-Encoding other than chunked alone");
  expect_response_refused("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                          "Transfer-Encoding in an HTTP/1.0 message");
  expect_response_refused("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
                          "more than one Content-Length header");
  expect_response_refused("HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n",
                          "Content-Length lists differing values");
  expect_response_refused("HTTP/1.1 304 Not Modified\r\nContent-Length: x\r\n\r\n",
                          "Content-Length is not a decimal number");
  expect_response_refused("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
                          "more than one Content-Length header", "HEAD");
  expect_response_refused("HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n", "bare LF at byte 15");
  expect_response_refused("HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n", "obs-fold");
  expect_response_refused("HTTP/1.1 200 OK\r\nA : b\r\n\r\n", "whitespace between a header name");
  expect_response_refused("HTTP/1.1 20 OK\r\n\r\n",
                          "not \"HTTP-version SP 3-digit-status SP reason\"");
  expect_response_refused("HTTP/1.1 2000 OK\r\n\r\n", "status code is not followed by a space");
  expect_response_refused("HTTP/1.1 200OK\r\n\r\n", "status code is not followed by a space");
  expect_response_refused("HTTP/1.1  200 OK\r\n\r\n", "not \"HTTP-version SP 3-digit-status");
  expect_response_refused("HTTP/1.1 099 OK\r\n\r\n", "status 099 is not in 100-599");
  expect_response_refused("HTTP/1.1 600 OK\r\n\r\n", "status 600 is not in 100-599");
  expect_response_refused("HTTP/1.1\r\n\r\n", "not \"HTTP-version SP 3-digit-status");
  expect_response_refused("HTTP/2.0 200 OK\r\n\r\n", "upstream answered in HTTP/2.0");
  expect_response_refused("HTTP/1.2 200 OK\r\n\r\n", "upstream answered in HTTP/1.2");
  expect_response_refused("ICY 200 OK\r\n\r\n", "status line does not start with HTTP/1.x");
  expect_response_refused("\r\nHTTP/1.1 200 OK\r\n\r\n",
                          "status line does not start with HTTP/1.x");
  expect_response_refused("HTTP/1.1 200 O\x01K\r\n\r\n", "control byte 0x01 in the reason phrase");
  HttpLimits limits;
  limits.max_head_bytes = 32;
  expect_response_refused("HTTP/1.1 200 OK\r\nServer: " + std::string(20, 's') + "\r\n\r\n",
                          "response head is longer than 32 bytes", "GET", limits);
  limits.max_headers = 1;
  expect_response_refused("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\n",
                          "response has more than 1 header fields", "GET", limits);
}

}  // namespace
}  // namespace sandbox_host::egress
