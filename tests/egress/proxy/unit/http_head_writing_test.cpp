// The egress proxy's writing of heads (http_message.hpp): request and response heads written
// back as they were read, edited headers read back as written, whatever would split the
// message refused, and the hop-by-hop headers erased.
#include "http_head_summary.hpp"

#include <sandbox_host/egress/proxy/http_message.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace sandbox_host::egress {
namespace {

using namespace std::string_literals;
using namespace http_test;

TEST(SerializeRequestHead, WritesWhatWasRead) {
  const std::string text =
      "POST /submit?x=1 HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3\r\nX-Odd: a\tb\r\n\r\n";
  const RequestParse r = parse(text);
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(serialize_request_head(r.head), text);
}

TEST(SerializeRequestHead, AbsoluteFormGoesOutInOriginForm) {
  const RequestParse r =
      parse("GET http://example.com:8080 HTTP/1.0\r\nHost:   example.com:8080  \r\n\r\n");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(serialize_request_head(r.head), "GET / HTTP/1.0\r\nHost: example.com:8080\r\n\r\n");
}

TEST(SerializeRequestHead, EditedHeadersAreReadBackAsWritten) {
  RequestParse r = parse(
      "GET / HTTP/1.1\r\nHost: api.example\r\nauthorization: Basic Zm9v\r\n"
      "Accept: */*\r\nAUTHORIZATION: again\r\n\r\n");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(erase_headers(r.head.headers, "Authorization"), 2u);
  EXPECT_EQ(erase_headers(r.head.headers, "Authorization"), 0u);
  r.head.headers.push_back({"Authorization", "token abc"});
  const std::string written = serialize_request_head(r.head);
  EXPECT_EQ(
      written,
      "GET / HTTP/1.1\r\nHost: api.example\r\nAccept: */*\r\nAuthorization: token abc\r\n\r\n");
  const RequestParse again = parse(written);
  ASSERT_EQ(again.state, ParseState::complete) << summary(again);
  EXPECT_EQ(*again.head.header("authorization"), "token abc");
}

TEST(SerializeRequestHead, RefusesWhatWouldSplitTheMessage) {
  const RequestParse r = parse("GET /x HTTP/1.1\r\nHost: a\r\n\r\n");
  ASSERT_EQ(r.state, ParseState::complete);
  for (const HttpHeader &bad : std::vector<HttpHeader>{{"X", "a\r\nInjected: yes"},
                                                       {"X", "a\nb"},
                                                       {"X", "a\0b"s},
                                                       {"X Y", "v"},
                                                       {"X:", "v"},
                                                       {"", "v"}}) {
    HttpRequestHead head = r.head;
    head.headers.push_back(bad);
    EXPECT_THROW(serialize_request_head(head), std::invalid_argument) << bad.name << bad.value;
  }
  for (const std::string target : {"", "/a b", "/a\r\n", "/caf\xc3\xa9", "/#f"}) {
    HttpRequestHead head = r.head;
    head.origin_target = target;
    EXPECT_THROW(serialize_request_head(head), std::invalid_argument) << target;
  }
  HttpRequestHead head = r.head;
  head.method = "GET /evil";
  EXPECT_THROW(serialize_request_head(head), std::invalid_argument);
  head = r.head;
  head.minor_version = 2;
  EXPECT_THROW(serialize_request_head(head), std::invalid_argument);
}

TEST(SerializeResponseHead, WritesWhatWasRead) {
  const std::string text = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nVary: *\r\n\r\n";
  const ResponseParse r = response(text);
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(serialize_response_head(r.head), text);

  HttpResponseHead head = r.head;
  head.reason = "bad\r\nX: y";
  EXPECT_THROW(serialize_response_head(head), std::invalid_argument);
  head = r.head;
  head.status = 1000;
  EXPECT_THROW(serialize_response_head(head), std::invalid_argument);
  head = r.head;
  head.headers.push_back({"Set-Cookie", "a\rb"});
  EXPECT_THROW(serialize_response_head(head), std::invalid_argument);
}

TEST(EraseHopByHopHeaders, RemovesConnectionAndWhatItNames) {
  RequestParse r = parse(
      "GET / HTTP/1.1\r\nHost: a\r\nConnection: X-Private, keep-alive\r\nConnection: Upgrade\r\n"
      "X-Private: 1\r\nx-private: 2\r\nKeep-Alive: timeout=5\r\nProxy-Connection: keep-alive\r\n"
      "Proxy-Authorization: Basic eDp5\r\nTE: trailers\r\nTrailer: X-Sum\r\n"
      "Transfer-Encoding: chunked\r\nUpgrade: h2c\r\nAccept: */*\r\nX-Public: 3\r\n\r\n");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  erase_hop_by_hop_headers(r.head.headers);
  std::vector<std::string> names;
  for (const auto &h : r.head.headers) names.push_back(h.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Host", "Accept", "X-Public"}));
}

}  // namespace
}  // namespace sandbox_host::egress
