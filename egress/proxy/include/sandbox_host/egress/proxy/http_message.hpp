// What an HTTP/1.x client or upstream sends the egress proxy: request and response heads,
// chunked bodies, and the heads written back out. Strict on purpose: the proxy adds
// credentials and re-frames bodies from what these parsers report, so any message two
// implementations could read differently (request smuggling) is refused here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::egress {

struct HttpHeader {
  std::string name;   // as sent
  std::string value;  // without the optional whitespace around it

  bool operator==(const HttpHeader &) const = default;
};

enum class BodyFraming { none, content_length, chunked, until_close };

struct HttpLimits {
  std::size_t max_head_bytes = 64 * 1024;  // start line, headers and the empty line
  std::size_t max_headers = 100;
  std::size_t max_target_bytes = 8 * 1024;
};

// What was wrong with a message. status is the answer the proxy gives: 400, 414, 431, 501 or
// 505 for a request; 502 for anything wrong with an upstream's response. reason is printable
// ASCII and never quotes a header value (it could be a credential), only names the header.
struct HttpError {
  int status = 400;
  std::string reason;
};

// ChunkedDecoder's refusal; what() is the reason.
class HttpParseError : public std::runtime_error {
 public:
  explicit HttpParseError(HttpError error);
  const HttpError &error() const noexcept { return error_; }

 private:
  HttpError error_;
};

enum class ParseState { incomplete, complete, error };

struct HttpRequestHead {
  enum class Form { origin, absolute, authority, asterisk };

  std::string method, target;  // target as sent
  int minor_version = 1;       // HTTP/1.0 or HTTP/1.1
  std::vector<HttpHeader> headers;
  Form form = Form::origin;
  // absolute-form: the scheme in lowercase; anything but "http" is the proxy's to refuse.
  std::string scheme;
  // absolute- or authority-form: the host as sent (an IPv6 literal without its brackets, a
  // zone id as sent: "fe80::1%25eth0"); empty for origin- and asterisk-form, where the Host
  // header names it.
  std::string host;
  // Explicit, or the scheme's default (http 80, https 443, 0 for others).
  std::uint16_t port = 0;
  // What the request line sent on names: the path and query ("/" when the path is empty) for
  // origin- and absolute-form, "*" for asterisk-form, the authority for CONNECT.
  std::string origin_target;
  BodyFraming framing = BodyFraming::none;  // none, content_length or chunked
  std::uint64_t content_length = 0;         // when framing is content_length
  bool keep_alive = true;  // HTTP/1.1 unless "Connection: close"; HTTP/1.0 only with keep-alive
  bool upgrade = false;    // an Upgrade header is present (the proxy refuses h2c)

  // The value of the first header named name (case-insensitively), or nullptr.
  const std::string *header(std::string_view name) const;
};

struct RequestParse {
  ParseState state = ParseState::incomplete;
  std::size_t consumed = 0;  // when complete: the head's bytes, the body starts after them
  HttpRequestHead head;
  HttpError error;
};

// Parses the request head at the start of buffer: everything read so far on a connection,
// called again with more while incomplete. Empty lines before the request line are skipped
// (RFC 9112 2.2). A result other than incomplete does not change when more bytes arrive.
// Each call reads from the start; a caller fed a byte at a time may call only once an LF has
// come or the head limit is full, and gets the same results.
RequestParse parse_request_head(std::string_view buffer, const HttpLimits &limits = {});

struct HttpResponseHead {
  int minor_version = 1;
  int status = 0;
  std::string reason;
  std::vector<HttpHeader> headers;
  // none for 1xx, 204, 304 and for a response to HEAD or a 2xx to CONNECT; until_close when
  // the response has neither Content-Length nor Transfer-Encoding.
  BodyFraming framing = BodyFraming::none;
  std::uint64_t content_length = 0;  // when framing is content_length
  bool keep_alive = true;            // false whenever the body ends at the connection's close

  const std::string *header(std::string_view name) const;
};

struct ResponseParse {
  ParseState state = ParseState::incomplete;
  std::size_t consumed = 0;
  HttpResponseHead head;
  HttpError error;  // status 502
};

// Parses the response head at the start of buffer, as parse_request_head does; which
// responses have a body depends on request_method (HEAD, CONNECT). A 1xx is a head of its
// own: the final response's head follows it, after consumed.
ResponseParse parse_response_head(std::string_view buffer, std::string_view request_method,
                                  const HttpLimits &limits = {});

// A chunked body, decoded as it arrives: chunk extensions and trailer fields are checked and
// dropped, the data is appended to out.
class ChunkedDecoder {
 public:
  // A chunk-size line (size, extensions, CRLF) longer than this is refused.
  static constexpr std::size_t kMaxSizeLineBytes = 4096;

  // The trailer section is held to limits.max_head_bytes and limits.max_headers.
  explicit ChunkedDecoder(const HttpLimits &limits = {});

  // Returns how many bytes of in it used: all of them, unless the body ends inside in (the
  // rest is the next message's). Throws HttpParseError (status 400) on bad framing, then on
  // every call.
  std::size_t feed(std::string_view in, std::string &out);
  // The last chunk and the trailer section have been read.
  bool done() const noexcept;

 private:
  enum class Stage { size_line, data, data_end, trailer, done, failed };

  [[noreturn]] void fail(std::string reason);
  void finish_size_line();
  void finish_trailer_line();

  HttpLimits limits_;
  Stage stage_ = Stage::size_line;
  std::string line_;               // the size or trailer line read so far
  std::uint64_t remaining_ = 0;    // data bytes left in the current chunk
  std::size_t data_end_seen_ = 0;  // bytes of the CRLF after a chunk's data
  std::size_t trailer_bytes_ = 0;
  std::size_t trailer_fields_ = 0;
  HttpError failure_;
};

// The head written back, headers as held (the proxy edits them first): the request line with
// origin_target, the status line with status and reason. Throws std::invalid_argument when a
// part breaks the grammar (a method or header name that is not a token; a target with a
// space, control, non-ASCII byte or '#'; a value with a control such as CR or LF), which
// would let an edited head be read as two messages.
std::string serialize_request_head(const HttpRequestHead &head);
std::string serialize_response_head(const HttpResponseHead &head);

// Removes every header named name (case-insensitively); returns how many there were.
std::size_t erase_headers(std::vector<HttpHeader> &headers, std::string_view name);
// Removes what a proxy does not forward (RFC 9110 7.6.1): Connection and the headers it
// lists, Keep-Alive, Proxy-Connection, Proxy-Authorization, TE, Trailer, Transfer-Encoding
// and Upgrade. The caller sets the framing headers of the message it sends afterwards.
void erase_hop_by_hop_headers(std::vector<HttpHeader> &headers);

}  // namespace sandbox_host::egress
