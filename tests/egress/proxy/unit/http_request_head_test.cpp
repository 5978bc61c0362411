// The egress proxy's parser of request heads (http_message.hpp): heads taken apart the way a
// client sends them, every refusal with its status and the words that name what was wrong,
// and the result unchanged however the bytes arrive.
#include "http_head_summary.hpp"

#include <sandbox_host/egress/proxy/http_message.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::egress {
namespace {

using namespace std::string_literals;
using namespace http_test;
using Form = HttpRequestHead::Form;

// Every prefix of text gives either incomplete or exactly what all of text gives: the proxy
// may call with any amount read so far.
void expect_same_at_every_prefix(std::string_view text, const HttpLimits &limits = {}) {
  const std::string whole = summary(parse(text, limits));
  for (std::size_t k = 0; k < text.size(); ++k) {
    const std::string part = summary(parse(text.substr(0, k), limits));
    if (part != "incomplete") {
      ASSERT_EQ(part, whole) << "after " << k << " of " << text.size() << " bytes";
    }
  }
}

void expect_refused(std::string_view text, int status, std::string_view words,
                    const HttpLimits &limits = {}) {
  SCOPED_TRACE(std::string(text));
  const RequestParse result = parse(text, limits);
  ASSERT_EQ(result.state, ParseState::error) << summary(result);
  EXPECT_EQ(result.error.status, status) << result.error.reason;
  EXPECT_NE(result.error.reason.find(words), std::string::npos)
      << "reason \"" << result.error.reason << "\" does not say \"" << words << "\"";
  EXPECT_EQ(result.consumed, 0u);
  expect_same_at_every_prefix(text, limits);
}

const std::string kHost = "Host: example.com\r\n";

// ---- requests: what is taken ---------------------------------------------------------------

TEST(ParseRequestHead, OriginFormWithHeaders) {
  const std::string head = "GET /a/b?c=d HTTP/1.1\r\nHost: example.com\r\nAccept:  */* \t\r\n\r\n";
  const RequestParse r = parse(head + "body bytes");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(r.consumed, head.size());
  EXPECT_EQ(r.head.method, "GET");
  EXPECT_EQ(r.head.target, "/a/b?c=d");
  EXPECT_EQ(r.head.minor_version, 1);
  EXPECT_EQ(r.head.form, Form::origin);
  EXPECT_EQ(r.head.origin_target, "/a/b?c=d");
  EXPECT_EQ(r.head.host, "");
  EXPECT_EQ(r.head.port, 0);
  ASSERT_EQ(r.head.headers.size(), 2u);
  EXPECT_EQ(r.head.headers[0].name, "Host");
  EXPECT_EQ(r.head.headers[0].value, "example.com");
  EXPECT_EQ(r.head.headers[1].name, "Accept");
  EXPECT_EQ(r.head.headers[1].value, "*/*");
  EXPECT_EQ(r.head.framing, BodyFraming::none);
  EXPECT_TRUE(r.head.keep_alive);
  EXPECT_FALSE(r.head.upgrade);
}

TEST(ParseRequestHead, HeaderLookupIsCaseInsensitiveAndTakesTheFirst) {
  const RequestParse r =
      parse("GET / HTTP/1.1\r\nhOsT: a\r\nX-Twice: one\r\nx-twice: two\r\nEmpty:\r\n\r\n");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  ASSERT_NE(r.head.header("HOST"), nullptr);
  EXPECT_EQ(*r.head.header("HOST"), "a");
  EXPECT_EQ(*r.head.header("X-TWICE"), "one");
  ASSERT_NE(r.head.header("empty"), nullptr);
  EXPECT_EQ(*r.head.header("empty"), "");
  EXPECT_EQ(r.head.header("Missing"), nullptr);
  EXPECT_EQ(r.head.headers[0].name, "hOsT");
}

TEST(ParseRequestHead, AbsoluteForm) {
  const RequestParse r = parse("GET http://Example.COM:8080/p?q=1 HTTP/1.1\r\n" + kHost + "\r\n");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(r.head.form, Form::absolute);
  EXPECT_EQ(r.head.scheme, "http");
  EXPECT_EQ(r.head.host, "Example.COM");
  EXPECT_EQ(r.head.port, 8080);
  EXPECT_EQ(r.head.origin_target, "/p?q=1");
  EXPECT_EQ(r.head.target, "http://Example.COM:8080/p?q=1");
}

TEST(ParseRequestHead, AbsoluteFormAndHostMayDiffer) {
  // Which one counts is the proxy's to decide; both are reported.
  const RequestParse r = parse("GET http://a.example/ HTTP/1.1\r\nHost: b.example:81\r\n\r\n");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(r.head.host, "a.example");
  EXPECT_EQ(r.head.port, 80);
  EXPECT_EQ(*r.head.header("Host"), "b.example:81");
}

TEST(ParseRequestHead, AbsoluteFormDefaultsPortAndPath) {
  struct Case {
    std::string target, scheme, host;
    std::uint16_t port;
    std::string origin_target;
  };
  for (const Case &c : std::vector<Case>{
           {"http://example.com", "http", "example.com", 80, "/"},
           {"http://example.com?x=1", "http", "example.com", 80, "/?x=1"},
           {"HTTPS://example.com/", "https", "example.com", 443, "/"},
           {"ftp://files.example/f", "ftp", "files.example", 0, "/f"},
           {"http://[::1]:8080/x", "http", "::1", 8080, "/x"},
           {"http://[2001:db8::1]/", "http", "2001:db8::1", 80, "/"},
           {"http://[fe80::1%25eth0]/", "http", "fe80::1%25eth0", 80, "/"},
           {"http://127.1/", "http", "127.1", 80, "/"},
           {"http://example.com.:81//a@b", "http", "example.com.", 81, "//a@b"},
       }) {
    SCOPED_TRACE(c.target);
    const RequestParse r = parse("GET " + c.target + " HTTP/1.1\r\n" + kHost + "\r\n");
    ASSERT_EQ(r.state, ParseState::complete) << summary(r);
    EXPECT_EQ(r.head.form, Form::absolute);
    EXPECT_EQ(r.head.scheme, c.scheme);
    EXPECT_EQ(r.head.host, c.host);
    EXPECT_EQ(r.head.port, c.port);
    EXPECT_EQ(r.head.origin_target, c.origin_target);
  }
}

TEST(ParseRequestHead, AuthorityFormForConnect) {
  RequestParse r = parse("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(r.head.form, Form::authority);
  EXPECT_EQ(r.head.host, "example.com");
  EXPECT_EQ(r.head.port, 443);
  EXPECT_EQ(r.head.origin_target, "example.com:443");
  EXPECT_EQ(r.head.framing, BodyFraming::none);

  r = parse("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\nHost: [2001:db8::1]:8443\r\n\r\n");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(r.head.host, "2001:db8::1");
  EXPECT_EQ(r.head.port, 8443);

  r = parse("CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(r.head.framing, BodyFraming::none);
}

TEST(ParseRequestHead, AsteriskFormForOptions) {
  const RequestParse r = parse("OPTIONS * HTTP/1.1\r\n" + kHost + "\r\n");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(r.head.form, Form::asterisk);
  EXPECT_EQ(r.head.origin_target, "*");
}

TEST(ParseRequestHead, Http10NeedsNoHost) {
  const RequestParse r = parse("GET /x HTTP/1.0\r\n\r\n");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(r.head.minor_version, 0);
  EXPECT_FALSE(r.head.keep_alive);
}

TEST(ParseRequestHead, KeepAlive) {
  struct Case {
    std::string version, headers;
    bool keep_alive;
  };
  for (const Case &c : std::vector<Case>{
           {"1.1", "", true},
           {"1.1", "Connection: close\r\n", false},
           {"1.1", "Connection: Upgrade, CLOSE\r\nUpgrade: x\r\n", false},
           {"1.1", "Connection: keep-alive\r\nConnection: close\r\n", false},
           {"1.0", "", false},
           {"1.0", "Connection: Keep-Alive\r\n", true},
           {"1.0", "Connection: closed\r\n", false},
           {"1.1", "Connection: closed\r\n", true},
       }) {
    SCOPED_TRACE(c.version + " " + c.headers);
    const RequestParse r = parse("GET / HTTP/" + c.version + "\r\n" + kHost + c.headers + "\r\n");
    ASSERT_EQ(r.state, ParseState::complete) << summary(r);
    EXPECT_EQ(r.head.keep_alive, c.keep_alive);
  }
}

TEST(ParseRequestHead, UpgradeIsReported) {
  const RequestParse r = parse("GET / HTTP/1.1\r\n" + kHost +
                               "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n\r\n");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_TRUE(r.head.upgrade);
}

TEST(ParseRequestHead, Framing) {
  struct Case {
    std::string headers;
    BodyFraming framing;
    std::uint64_t length;
  };
  for (const Case &c : std::vector<Case>{
           {"", BodyFraming::none, 0},
           {"Content-Length: 0\r\n", BodyFraming::content_length, 0},
           {"Content-Length: 42\r\n", BodyFraming::content_length, 42},
           {"Content-Length: 007\r\n", BodyFraming::content_length, 7},
           {"Content-Length: 5, 5\r\n", BodyFraming::content_length, 5},
           {"content-length: 18446744073709551615\r\n", BodyFraming::content_length,
            18446744073709551615ull},
           {"Transfer-Encoding: chunked\r\n", BodyFraming::chunked, 0},
           {"transfer-encoding:  Chunked \r\n", BodyFraming::chunked, 0},
       }) {
    SCOPED_TRACE(c.headers);
    const RequestParse r = parse("POST /upload HTTP/1.1\r\n" + kHost + c.headers + "\r\n");
    ASSERT_EQ(r.state, ParseState::complete) << summary(r);
    EXPECT_EQ(r.head.framing, c.framing);
    EXPECT_EQ(r.head.content_length, c.length);
  }
}

TEST(ParseRequestHead, EmptyLinesBeforeTheRequestLineAreSkipped) {
  const std::string text = "\r\n\r\nGET / HTTP/1.1\r\n" + kHost + "\r\n";
  const RequestParse r = parse(text);
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(r.consumed, text.size());
  EXPECT_EQ(r.head.method, "GET");
}

TEST(ParseRequestHead, IncompleteUntilTheEmptyLine) {
  const std::string text = "POST /x HTTP/1.1\r\n" + kHost + "Content-Length: 3\r\n\r\n";
  for (std::size_t k = 0; k < text.size(); ++k) {
    EXPECT_EQ(parse(text.substr(0, k)).state, ParseState::incomplete) << k;
  }
  expect_same_at_every_prefix(text + "abc");
  EXPECT_EQ(parse(text + "abc").consumed, text.size());
}

TEST(ParseRequestHead, ObsTextInValuesIsKept) {
  const RequestParse r = parse("GET / HTTP/1.1\r\n" + kHost + "X-Name: caf\xc3\xa9\r\n\r\n");
  ASSERT_EQ(r.state, ParseState::complete) << summary(r);
  EXPECT_EQ(*r.head.header("X-Name"), "caf\xc3\xa9");
}

TEST(ParseRequestHead, LimitsAreInclusive) {
  HttpLimits limits;
  limits.max_target_bytes = 10;
  limits.max_headers = 2;
  const std::string text = "GET /123456789 HTTP/1.1\r\n" + kHost + "A: b\r\n\r\n";
  limits.max_head_bytes = text.size();
  EXPECT_EQ(parse(text, limits).state, ParseState::complete) << summary(parse(text, limits));
}

// ---- requests: what is refused -------------------------------------------------------------

TEST(ParseRequestHead, RefusesBareLineEnds) {
  expect_refused("GET / HTTP/1.1\n" + kHost + "\r\n", 400, "bare LF at byte 14");
  expect_refused("GET / HTTP/1.1\r\nHost: a\n\r\n", 400, "bare LF at byte 23");
  expect_refused("GET / HTTP/1.1\r\nHost: a\r\n\n", 400, "bare LF at byte 25");
  expect_refused("GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", 400, "bare CR at byte 23");
  expect_refused("GET /\r HTTP/1.1\r\n" + kHost + "\r\n", 400, "bare CR at byte 5");
  expect_refused("\n", 400, "bare LF at byte 0");
}

TEST(ParseRequestHead, RefusesMalformedRequestLines) {
  expect_refused("GET /\r\n\r\n", 400, "not \"method SP target SP HTTP-version\"");
  expect_refused("GET\r\n\r\n", 400, "not \"method SP target SP HTTP-version\"");
  expect_refused("GET  / HTTP/1.1\r\n" + kHost + "\r\n", 400, "more than two spaces");
  expect_refused("GET /a b HTTP/1.1\r\n" + kHost + "\r\n", 400, "more than two spaces");
  expect_refused("GET / HTTP/1.1 \r\n" + kHost + "\r\n", 400, "more than two spaces");
  expect_refused(" / HTTP/1.1\r\n" + kHost + "\r\n", 400, "starts with a space");
  expect_refused("G(T / HTTP/1.1\r\n" + kHost + "\r\n", 400, "method is not a token");
  expect_refused("GET / http/1.1\r\n" + kHost + "\r\n", 400, "does not end in HTTP/1.0 or");
  expect_refused("GET / HTTP/1.10\r\n" + kHost + "\r\n", 400, "does not end in HTTP/1.0 or");
  expect_refused("GET / HTTP/1\r\n" + kHost + "\r\n", 400, "does not end in HTTP/1.0 or");
}

TEST(ParseRequestHead, RefusesOtherVersionsWith505) {
  expect_refused("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, "HTTP/2 connection preface");
  expect_refused("GET / HTTP/2.0\r\n" + kHost + "\r\n", 505, "HTTP version 2.0 is not supported");
  expect_refused("GET / HTTP/1.2\r\n" + kHost + "\r\n", 505, "HTTP version 1.2 is not supported");
  expect_refused("GET / HTTP/0.9\r\n\r\n", 505, "HTTP version 0.9 is not supported");
}

TEST(ParseRequestHead, RefusesBadTargetBytes) {
  expect_refused("GET /a\x01 HTTP/1.1\r\n" + kHost + "\r\n", 400,
                 "control byte 0x01 in the request target at offset 2");
  expect_refused("GET /a\x7f HTTP/1.1\r\n" + kHost + "\r\n", 400, "control byte 0x7f");
  expect_refused("GET /a\tb HTTP/1.1\r\n" + kHost + "\r\n", 400, "control byte 0x09");
  expect_refused("GET /caf\xc3\xa9 HTTP/1.1\r\n" + kHost + "\r\n", 400,
                 "non-ASCII byte 0xc3 in the request target at offset 4; percent-encode it");
  expect_refused("GET /a#frag HTTP/1.1\r\n" + kHost + "\r\n", 400, "fragment");
  expect_refused("GET  HTTP/1.1\r\n" + kHost + "\r\n", 400, "request target is empty");
}

TEST(ParseRequestHead, RefusesBadHeaderLines) {
  const std::string line = "GET / HTTP/1.1\r\n" + kHost;
  expect_refused(line + "X-A : b\r\n\r\n", 400, "whitespace between a header name and its colon");
  expect_refused(line + "X-A\t: b\r\n\r\n", 400, "whitespace between a header name and its colon");
  expect_refused(line + "X-A: b\r\n  continued\r\n\r\n", 400, "obs-fold");
  expect_refused("GET / HTTP/1.1\r\n " + kHost + "\r\n", 400, "obs-fold");
  expect_refused(line + "no colon here\r\n\r\n", 400, "header line without a colon");
  expect_refused(line + ": value\r\n\r\n", 400, "header line with an empty name");
  expect_refused(line + "X(A): b\r\n\r\n", 400, "header name holds '('");
  expect_refused(line + "X A: b\r\n\r\n", 400, "header name holds byte 0x20");
  expect_refused(line +
                     "X-A: b\x01"
                     "c\r\n\r\n",
                 400, "control byte 0x01 in the value of header \"X-A\"");
  expect_refused(line + "X-A: b\x7f\r\n\r\n", 400, "control byte 0x7f in the value of header");
  expect_refused(line + "X-A: b\0c\r\n\r\n"s, 400, "control byte 0x00 in the value of header");
}

TEST(ParseRequestHead, ReasonsNeverQuoteAHeaderValue) {
  const RequestParse r =
      parse("GET / HTTP/1.1\r\n" + kHost + "Authorization: Bearer s3cr3t\x01tok\r\n\r\n");
  ASSERT_EQ(r.state, ParseState::error);
  EXPECT_NE(r.error.reason.find("\"Authorization\""), std::string::npos) << r.error.reason;
  EXPECT_EQ(r.error.reason.find("s3cr3t"), std::string::npos) << r.error.reason;
}

TEST(ParseRequestHead, RefusesAmbiguousFraming) {
  const std::string line = "POST / HTTP/1.1\r\n" + kHost;
  expect_refused(line + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
                 "both Content-Length and Transfer-Encoding");
  expect_refused(line + "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400,
                 "both Content-Length and Transfer-Encoding");
  const std::string unsupported = "Transfer-Encoding other than chunked alone is not supported";
  expect_refused(line + "Transfer-Encoding: gzip, chunked\r\n\r\n", 501, unsupported);
  expect_refused(line + "Transfer-Encoding: chunked, chunked\r\n\r\n", 501, unsupported);
  expect_refused(line + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 501,
                 unsupported);
  expect_refused(line + "Transfer-Encoding: identity\r\n\r\n", 501, unsupported);
  expect_refused(line + "Transfer-Encoding: chunked,\r\n\r\n", 501, unsupported);
  expect_refused(line + "Transfer-Encoding: \r\n\r\n", 501, unsupported);
  expect_refused(line + "Transfer-Encoding: xchunked\r\n\r\n", 501, unsupported);
  expect_refused("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
                 "Transfer-Encoding in an HTTP/1.0 message");
  expect_refused(line + "Content-Length: 3\r\nContent-Length: 3\r\n\r\n", 400,
                 "more than one Content-Length header");
  expect_refused(line + "Content-Length: 3, 4\r\n\r\n", 400,
                 "Content-Length lists differing values");
  expect_refused(line + "Content-Length: 3,\r\n\r\n", 400,
                 "Content-Length is not a decimal number");
  expect_refused(line + "Content-Length: abc\r\n\r\n", 400,
                 "Content-Length is not a decimal number");
  expect_refused(line + "Content-Length: -1\r\n\r\n", 400,
                 "Content-Length is not a decimal number");
  expect_refused(line + "Content-Length: +1\r\n\r\n", 400,
                 "Content-Length is not a decimal number");
  expect_refused(line + "Content-Length: 1 2\r\n\r\n", 400,
                 "Content-Length is not a decimal number");
  expect_refused(line + "Content-Length: 0x10\r\n\r\n", 400,
                 "Content-Length is not a decimal number");
  expect_refused(line + "Content-Length:\r\n\r\n", 400, "Content-Length is not a decimal number");
  expect_refused(line + "Content-Length: 18446744073709551616\r\n\r\n", 400,
                 "Content-Length does not fit in 64 bits");
  expect_refused("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nContent-Length: 5\r\n\r\n", 400,
                 "CONNECT request with content");
  expect_refused("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
                 "CONNECT request with content");
}

TEST(ParseRequestHead, RefusesMissingOrBadHost) {
  expect_refused("GET / HTTP/1.1\r\n\r\n", 400, "HTTP/1.1 request without a Host header");
  expect_refused("GET http://a/ HTTP/1.1\r\n\r\n", 400, "HTTP/1.1 request without a Host header");
  expect_refused("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400, "more than one Host header");
  expect_refused("GET / HTTP/1.1\r\nHost: user@a\r\n\r\n", 400, "Host header holds userinfo");
  expect_refused("GET / HTTP/1.1\r\nHost: \r\n\r\n", 400, "Host header has no host");
  expect_refused("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "Host header: host holds byte 0x20");
  expect_refused("GET / HTTP/1.1\r\nHost: a:x\r\n\r\n", 400, "Host header: port is not a number");
  expect_refused("GET / HTTP/1.0\r\nHost: a/b\r\n\r\n", 400, "Host header: host holds '/'");
}

TEST(ParseRequestHead, RefusesBadTargets) {
  const auto request = [](const std::string &method, const std::string &target) {
    return method + " " + target + " HTTP/1.1\r\n" + kHost + "\r\n";
  };
  const std::string userinfo = "holds userinfo (user@host): credentials in URLs are refused";
  expect_refused(request("GET", "http://user@example.com/"), 400, userinfo);
  expect_refused(request("GET", "http://user:pw@example.com/"), 400, userinfo);
  expect_refused(request("GET", "https://@example.com/"), 400, userinfo);
  expect_refused(request("GET", "http:///x"), 400, "request target's authority has no host");
  expect_refused(request("GET", "http://:80/"), 400, "request target's authority has no host");
  expect_refused(request("GET", "http://a:/"), 400, "has an empty port");
  expect_refused(request("GET", "http://a:0/"), 400, "port is not in 1-65535");
  expect_refused(request("GET", "http://a:65536/"), 400, "port is not in 1-65535");
  expect_refused(request("GET", "http://a:99999999999999999999/"), 400, "port is not in 1-65535");
  expect_refused(request("GET", "http://ex%61mple.com/"), 400, "host holds '%'");
  expect_refused(request("GET", "http://[::1/"), 400, "'[' without ']'");
  expect_refused(request("GET", "http://[zz]/"), 400, "holds no IPv6 address");
  expect_refused(request("GET", "http://[v1.x]/"), 400, "holds no IPv6 address");
  expect_refused(request("GET", "http://[::1]x/"), 400, "'x' after ']'");
  expect_refused(request("GET", "http://[fe80::1%eth0]/"), 400, "zone id");
  expect_refused(request("GET", "http://::1/"), 400, "an IPv6 address needs brackets");
  expect_refused(request("GET", "mailto:x@y"), 400, "neither origin-form");
  expect_refused(request("GET", "http:/x"), 400, "neither origin-form");
  expect_refused(request("GET", "example.com:443"), 400, "host:port is for CONNECT only");
  expect_refused(request("GET", "*"), 400, "the '*' target is for OPTIONS only");
  expect_refused(request("CONNECT", "/path"), 400, "CONNECT's target is host:port");
  expect_refused(request("CONNECT", "http://a:443/"), 400, "CONNECT's target is host:port");
  expect_refused(request("CONNECT", "example.com"), 400, "CONNECT target has no port");
  expect_refused(request("CONNECT", "user@example.com:443"), 400, userinfo);
  expect_refused(request("CONNECT", "example.com:0"), 400, "port is not in 1-65535");
}

TEST(ParseRequestHead, RefusesWhatIsOverTheLimits) {
  HttpLimits limits;
  limits.max_head_bytes = 64;
  limits.max_headers = 2;
  limits.max_target_bytes = 16;
  expect_refused("GET / HTTP/1.1\r\nHost: a\r\nX-Long: " + std::string(60, 'x') + "\r\n\r\n", 431,
                 "request head is longer than 64 bytes", limits);
  expect_refused("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\n\r\n", 431,
                 "request has more than 2 header fields", limits);
  expect_refused("GET /" + std::string(16, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n", 414,
                 "request target is longer than 16 bytes", limits);
  expect_refused(std::string(64, '\r'), 431, "request head is longer than 64 bytes", limits);
  expect_refused(std::string(32, '\r') + std::string(32, '\n'), 400, "bare CR at byte 0", limits);
  expect_refused(std::string(64, 'G'), 431, "request head is longer than 64 bytes", limits);

  // A long target is refused before its line ends, and a head with no end before the limit.
  EXPECT_EQ(summary(parse("GET /" + std::string(16, 'a'), limits)),
            "error 414: request target is longer than 16 bytes");
  EXPECT_EQ(summary(parse("GET / HTTP/1.1\r\nX: " + std::string(45, 'x'), limits)),
            "error 431: request head is longer than 64 bytes");
  EXPECT_EQ(summary(parse("GET / HTTP/1.1\r\nX: " + std::string(44, 'x'), limits)), "incomplete");
}

}  // namespace
}  // namespace sandbox_host::egress
