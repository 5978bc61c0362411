// The egress proxy's HTTP parsers (http_message.hpp): request and response heads taken apart
// the way a client and an upstream send them, every refusal with its status and the words
// that name what was wrong, the result unchanged however the bytes arrive, chunked bodies
// decoded whole or a byte at a time, and heads written back and read again.
#include <sandbox_host/egress/proxy/http_message.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::egress {
namespace {

using namespace std::string_literals;
using Form = HttpRequestHead::Form;

RequestParse parse(std::string_view text, const HttpLimits &limits = {}) {
  return parse_request_head(text, limits);
}

// What a user reads of a result: its state, what it took, and its error or its head.
std::string summary(const RequestParse &r) {
  if (r.state == ParseState::incomplete) return "incomplete";
  if (r.state == ParseState::error) {
    return "error " + std::to_string(r.error.status) + ": " + r.error.reason;
  }
  std::string out = "complete " + std::to_string(r.consumed) + ": " + r.head.method + " " +
                    r.head.target + " 1." + std::to_string(r.head.minor_version) + " form " +
                    std::to_string(static_cast<int>(r.head.form)) + " " + r.head.scheme + " " +
                    r.head.host + " " + std::to_string(r.head.port) + " " + r.head.origin_target +
                    " framing " + std::to_string(static_cast<int>(r.head.framing)) + " " +
                    std::to_string(r.head.content_length) + (r.head.keep_alive ? " ka" : "") +
                    (r.head.upgrade ? " upgrade" : "");
  for (const auto &h : r.head.headers) out += " [" + h.name + "=" + h.value + "]";
  return out;
}

std::string summary(const ResponseParse &r) {
  if (r.state == ParseState::incomplete) return "incomplete";
  if (r.state == ParseState::error) {
    return "error " + std::to_string(r.error.status) + ": " + r.error.reason;
  }
  std::string out = "complete " + std::to_string(r.consumed) + ": 1." +
                    std::to_string(r.head.minor_version) + " " + std::to_string(r.head.status) +
                    " " + r.head.reason + " framing " +
                    std::to_string(static_cast<int>(r.head.framing)) + " " +
                    std::to_string(r.head.content_length) + (r.head.keep_alive ? " ka" : "");
  for (const auto &h : r.head.headers) out += " [" + h.name + "=" + h.value + "]";
  return out;
}

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

// ---- responses -------------------------------------------------------------------------------

ResponseParse response(std::string_view text, std::string_view method = "GET",
                       const HttpLimits &limits = {}) {
  return parse_response_head(text, method, limits);
}

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

// ---- chunked bodies --------------------------------------------------------------------------

struct Decoded {
  std::string data;
  std::size_t used = 0;
  bool done = false;
  std::string error;
};

Decoded decode(std::string_view body, std::size_t piece = 0, const HttpLimits &limits = {}) {
  ChunkedDecoder decoder(limits);
  Decoded result;
  try {
    if (piece == 0) {
      result.used = decoder.feed(body, result.data);
    } else {
      for (std::size_t at = 0; at < body.size() && !decoder.done(); at += piece) {
        result.used += decoder.feed(body.substr(at, piece), result.data);
      }
    }
  } catch (const HttpParseError &e) {
    EXPECT_EQ(e.error().status, 400);
    EXPECT_STREQ(e.what(), e.error().reason.c_str());
    result.error = e.error().reason;
  }
  result.done = decoder.done();
  return result;
}

// Decoding at once, a byte at a time and in threes gives the same.
Decoded decode_every_way(std::string_view body, const HttpLimits &limits = {}) {
  const Decoded whole = decode(body, 0, limits);
  for (std::size_t piece : {1, 3}) {
    const Decoded pieces = decode(body, piece, limits);
    EXPECT_EQ(pieces.data, whole.data) << "in pieces of " << piece;
    EXPECT_EQ(pieces.error, whole.error) << "in pieces of " << piece;
    EXPECT_EQ(pieces.done, whole.done) << "in pieces of " << piece;
    if (whole.error.empty()) {
      EXPECT_EQ(pieces.used, whole.used) << "in pieces of " << piece;
    }
  }
  return whole;
}

TEST(ChunkedDecoder, DecodesChunksAndStopsAtTheEnd) {
  const std::string body = "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
  const Decoded d = decode_every_way(body + "GET / HTTP/1.1\r\n");
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.data, "hello world");
  EXPECT_TRUE(d.done);
  EXPECT_EQ(d.used, body.size());
}

TEST(ChunkedDecoder, DropsExtensionsAndTrailers) {
  const std::string body =
      "A;name=value;flag\r\n0123456789\r\n1 ; q=\"a b\"\r\n!\r\n0\r\nX-Sum: abc\r\nY: \r\n\r\n";
  const Decoded d = decode_every_way(body);
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.data, "0123456789!");
  EXPECT_TRUE(d.done);
  EXPECT_EQ(d.used, body.size());
}

TEST(ChunkedDecoder, HexDigitsEitherCaseAndLeadingZeros) {
  const std::string data(0x1F, 'z');
  const Decoded d = decode_every_way("0001f\r\n" + data + "\r\n00\r\n\r\n");
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.data, data);
  EXPECT_TRUE(d.done);
  const Decoded upper = decode_every_way("1F\r\n" + data + "\r\n0\r\n\r\n");
  EXPECT_EQ(upper.data, data);
  EXPECT_TRUE(upper.done);
}

TEST(ChunkedDecoder, IsNotDoneBeforeTheTrailerEnds) {
  for (const std::string body :
       {"5\r\nhello\r\n", "5\r\nhello\r\n0\r\n", "5\r\nhel", "5\r\nhello\r\n0\r\nX: y\r\n"}) {
    const Decoded d = decode_every_way(body);
    EXPECT_EQ(d.error, "") << body;
    EXPECT_FALSE(d.done) << body;
    EXPECT_EQ(d.used, body.size()) << body;
  }
}

TEST(ChunkedDecoder, LargestSizeFits) {
  const Decoded d = decode_every_way("ffffffffffffffff\r\nabc");
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.data, "abc");
  EXPECT_FALSE(d.done);
}

TEST(ChunkedDecoder, SizeLineLimitCountsItsCrlf) {
  const std::string longest = "1;" + std::string(ChunkedDecoder::kMaxSizeLineBytes - 4, 'e');
  const Decoded d = decode_every_way(longest + "\r\nx\r\n0\r\n\r\n");
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.data, "x");
  EXPECT_EQ(decode_every_way(longest + "e\r\nx\r\n0\r\n\r\n").error,
            "chunk size line is longer than 4096 bytes");
}

TEST(ChunkedDecoder, RefusesBadFraming) {
  struct Case {
    std::string body, words;
  };
  for (const Case &c : std::vector<Case>{
           {"x\r\n", "chunk size is not a hexadecimal number"},
           {"\r\n", "chunk size is not a hexadecimal number"},
           {";ext\r\n", "chunk size is not a hexadecimal number"},
           {"-5\r\n", "chunk size is not a hexadecimal number"},
           {"0x5\r\n", "chunk size is followed by 'x', not a chunk extension"},
           {"5 \r\n", "whitespace after the chunk size"},
           {"5\t\r\n", "whitespace after the chunk size"},
           {"5;a\x01\r\n", "control byte 0x01 in a chunk extension"},
           {"10000000000000000\r\n", "chunk size does not fit in 64 bits"},
           {"5\nhello\r\n", "bare LF in a chunk size line"},
           {"5\r5\r\n", "bare CR in a chunk size line"},
           {"5\r\nhelloXX", "chunk data is not followed by CRLF"},
           {"5\r\nhello\n", "chunk data is not followed by CRLF"},
           {"5\r\nhello\r\r\n", "chunk data is not followed by CRLF"},
           {"0\r\n\n", "bare LF in the trailer section"},
           {"0\r\nX: y\n\r\n", "bare LF in the trailer section"},
           {"0\r\nX: y\rZ\r\n", "bare CR in the trailer section"},
           {"0\r\nno colon\r\n\r\n", "trailer field: header line without a colon"},
           {"0\r\nX: y\r\n z\r\n\r\n", "trailer field: header line starts with whitespace"},
           {"0\r\nX: a\x01\r\n\r\n", "trailer field: control byte 0x01"},
           {std::string(ChunkedDecoder::kMaxSizeLineBytes + 1, '0') + "\r\n",
            "chunk size line is longer than 4096 bytes"},
           {"1;" + std::string(ChunkedDecoder::kMaxSizeLineBytes, 'e'),
            "chunk size line is longer than 4096 bytes"},
       }) {
    SCOPED_TRACE(c.body.substr(0, 40));
    const Decoded d = decode_every_way(c.body);
    EXPECT_NE(d.error.find(c.words), std::string::npos) << "\"" << d.error << "\"";
    EXPECT_FALSE(d.done);
  }
}

TEST(ChunkedDecoder, HoldsTheTrailerToTheHeadLimits) {
  HttpLimits limits;
  limits.max_headers = 2;
  EXPECT_TRUE(decode_every_way("0\r\nA: 1\r\nB: 2\r\n\r\n", limits).done);
  EXPECT_EQ(decode_every_way("0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits).error,
            "trailer section has more than 2 fields");
  limits.max_head_bytes = 16;
  EXPECT_TRUE(decode_every_way("0\r\nA: 1\r\nB: 2\r\n\r\n", limits).done);
  EXPECT_EQ(decode_every_way("0\r\nA: 1\r\nB: 2222\r\n\r\n", limits).error,
            "trailer section is longer than 16 bytes");
  EXPECT_EQ(decode_every_way("0\r\nA: 123456789012345\r\n\r\n", limits).error,
            "trailer section is longer than 16 bytes");
}

TEST(ChunkedDecoder, FailureIsFinal) {
  ChunkedDecoder decoder;
  std::string out;
  EXPECT_THROW(decoder.feed("zz\r\n", out), HttpParseError);
  EXPECT_THROW(decoder.feed("5\r\nhello\r\n", out), HttpParseError);
  EXPECT_THROW(decoder.feed("", out), HttpParseError);
  EXPECT_EQ(out, "");
  EXPECT_FALSE(decoder.done());
}

TEST(ChunkedDecoder, TakesNothingOnceDone) {
  ChunkedDecoder decoder;
  std::string out;
  EXPECT_EQ(decoder.feed("0\r\n\r\n", out), 5u);
  ASSERT_TRUE(decoder.done());
  EXPECT_EQ(decoder.feed("3\r\nabc\r\n", out), 0u);
  EXPECT_EQ(out, "");
}

// ---- writing heads back ----------------------------------------------------------------------

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
