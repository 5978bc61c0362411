// One HTTP/1.1 request and its response passed from a client to an upstream, each body
// re-framed from what the strict parsers (http_message.hpp) read: exactly Content-Length
// bytes, or chunks decoded and encoded again, so no framing the two ends could read
// differently reaches the other. Used for plain-HTTP forwarding and inside terminated TLS.
#pragma once

#include <sandbox_host/egress/proxy/http_message.hpp>

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sandbox_host::egress {

// A connection's bytes, plain or through TLS.
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Some bytes appended to buffer; 0 at the end of the stream. Throws StreamError.
  virtual std::size_t read_some(std::string &buffer) = 0;
  virtual void write_all(std::string_view bytes) = 0;
};

// A read or write that failed or timed out; what() names the side and the cause.
class StreamError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A socket read and written with a time limit on each wait.
class SocketStream final : public ByteStream {
 public:
  SocketStream(int fd, std::chrono::milliseconds idle, std::string side);
  std::size_t read_some(std::string &buffer) override;
  void write_all(std::string_view bytes) override;

 private:
  void wait(short events);
  int fd_;
  std::chrono::milliseconds idle_;
  std::string side_;
};

// Reads until buffer holds a complete request head (parse state complete or error), or
// the stream ends (nullopt-like: state incomplete and stream_ended set).
struct ReadHead {
  RequestParse request;
  bool stream_ended = false;
};
ReadHead read_request_head(ByteStream &client, std::string &buffer, const HttpLimits &limits);

struct ExchangeResult {
  bool reusable = false;  // both connections may carry another request
  int status = 0;         // the upstream's final status
};

// Sends head (already edited by the caller: target, Host, credentials) with the request
// body read from client (buffer holds what was already read past the head), then passes
// the upstream's response back, head and body re-framed. A body-less request's framing is
// none. Throws StreamError or HttpParseError; the caller answers the client when nothing
// was sent to it yet (response_started() tells).
class Exchange {
 public:
  Exchange(ByteStream &client, std::string &client_buffer, ByteStream &upstream,
           std::string &upstream_buffer);
  ExchangeResult run(HttpRequestHead head, bool close_after);
  bool response_started() const { return response_started_; }

 private:
  ByteStream &client_, &upstream_;
  std::string &client_buffer_, &upstream_buffer_;
  bool response_started_ = false;
};

// A complete response from the proxy itself: status line, a text body naming what
// happened, Connection: close.
std::string proxy_response(int status, std::string_view body);

// The reason phrase of the statuses the proxy (and the metrics endpoint) answer with
// themselves; "Error" for any other.
const char *reason_phrase(int status);

}  // namespace sandbox_host::egress
