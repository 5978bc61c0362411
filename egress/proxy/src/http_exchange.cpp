#include <sandbox_host/egress/proxy/http_exchange.hpp>

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sandbox_host::egress {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

void set_framing(std::vector<HttpHeader> &headers, BodyFraming framing, std::uint64_t length) {
  if (framing == BodyFraming::content_length) {
    erase_headers(headers, "Content-Length");
    headers.push_back({"Content-Length", std::to_string(length)});
  } else if (framing == BodyFraming::chunked) {
    erase_headers(headers, "Content-Length");
    headers.push_back({"Transfer-Encoding", "chunked"});
  }
}

// Copies a body from `from` to `to`. buffer holds bytes of `from` already read; what is
// left in it afterwards belongs to the next message.
// A chunked body goes on chunked, or as plain bytes to an HTTP/1.0 client (which then
// learns its end from the connection's).
void relay_body(ByteStream &from, std::string &buffer, ByteStream &to, BodyFraming framing,
                std::uint64_t length, const char *what, bool chunks_out = true) {
  switch (framing) {
    case BodyFraming::none:
      return;
    case BodyFraming::content_length: {
      std::uint64_t left = length;
      while (left > 0) {
        if (buffer.empty() && from.read_some(buffer) == 0) {
          throw StreamError(std::string(what) + " ended " + std::to_string(left) +
                            " bytes short of its Content-Length");
        }
        const std::size_t take =
            static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size()));
        to.write_all(std::string_view(buffer).substr(0, take));
        buffer.erase(0, take);
        left -= take;
      }
      return;
    }
    case BodyFraming::chunked: {
      ChunkedDecoder decoder;
      std::string data;
      while (true) {
        if (!buffer.empty()) {
          const std::size_t used = decoder.feed(buffer, data);
          buffer.erase(0, used);
          if (!data.empty() && chunks_out) {
            char size[32];
            const int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
            data.insert(0, size, static_cast<std::size_t>(n));
            data += "\r\n";
          }
          if (!data.empty()) to.write_all(data);
          data.clear();
          if (decoder.done()) {
            if (chunks_out) to.write_all("0\r\n\r\n");
            return;
          }
        }
        if (from.read_some(buffer) == 0) {
          throw StreamError(std::string(what) + " ended inside its chunked body");
        }
      }
    }
    case BodyFraming::until_close:
      while (true) {
        if (!buffer.empty()) {
          to.write_all(buffer);
          buffer.clear();
        }
        if (from.read_some(buffer) == 0) return;
      }
  }
}

}  // namespace

SocketStream::SocketStream(int fd, std::chrono::milliseconds idle, std::string side)
    : fd_(fd), idle_(idle), side_(std::move(side)) {}

void SocketStream::wait(short events) {
  pollfd ready{fd_, events, 0};
  int n;
  do {
    n = ::poll(&ready, 1, static_cast<int>(idle_.count()));
  } while (n < 0 && errno == EINTR);
  if (n == 0) {
    throw StreamError(
        side_ + " sent nothing for " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(idle_).count()) + " s");
  }
  if (n < 0) throw StreamError(side_ + ": poll: " + std::strerror(errno));
}

std::size_t SocketStream::read_some(std::string &buffer) {
  char chunk[kReadChunk];
  for (;;) {
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n >= 0) {
      buffer.append(chunk, static_cast<std::size_t>(n));
      return static_cast<std::size_t>(n);
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN) throw StreamError(side_ + ": " + std::strerror(errno));
    wait(POLLIN);
  }
}

void SocketStream::write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) throw StreamError(side_ + ": " + std::strerror(errno));
    wait(POLLOUT);
  }
}

namespace {

// Whether a head parser could answer anything new once bytes from `from` on were added:
// it reads from the start each time, and its answer only changes at a line's end or at the
// size limit, so a peer that sends a byte at a time costs one parse per line, not per byte.
bool worth_parsing(const std::string &buffer, std::size_t from, const HttpLimits &limits) {
  return buffer.find('\n', from) != std::string::npos || buffer.size() > limits.max_head_bytes;
}

}  // namespace

ReadHead read_request_head(ByteStream &client, std::string &buffer, const HttpLimits &limits) {
  ReadHead result;
  std::size_t unseen = 0;  // where the bytes the parser has not been asked about begin
  for (;;) {
    if (worth_parsing(buffer, unseen, limits)) {
      result.request = parse_request_head(buffer, limits);
      if (result.request.state != ParseState::incomplete) return result;
    }
    unseen = buffer.size();
    if (client.read_some(buffer) == 0) {
      result.stream_ended = true;
      return result;
    }
  }
}

Exchange::Exchange(ByteStream &client, std::string &client_buffer, ByteStream &upstream,
                   std::string &upstream_buffer)
    : client_(client),
      upstream_(upstream),
      client_buffer_(client_buffer),
      upstream_buffer_(upstream_buffer) {}

ExchangeResult Exchange::run(HttpRequestHead head, bool close_after) {
  // The proxy answers "100 Continue" itself and sends the upstream the whole body: the
  // upstream's own interim answer would otherwise race the body the client sends.
  const std::string *expect = head.header("Expect");
  const bool client_expects = expect != nullptr && equals_ignoring_case(*expect, "100-continue");
  erase_headers(head.headers, "Expect");
  const BodyFraming request_framing = head.framing;
  const std::uint64_t request_length = head.content_length;
  const int client_minor = head.minor_version;
  const bool client_keeps = head.keep_alive && !close_after;
  erase_hop_by_hop_headers(head.headers);
  set_framing(head.headers, request_framing, request_length);
  head.minor_version = 1;
  head.headers.push_back({"Connection", client_keeps ? "keep-alive" : "close"});
  upstream_.write_all(serialize_request_head(head));
  if (request_framing != BodyFraming::none) {
    if (client_expects && client_minor == 1) {
      client_.write_all("HTTP/1.1 100 Continue\r\n\r\n");
    }
    relay_body(client_, client_buffer_, upstream_, request_framing, request_length,
               "the client's request body");
  }

  for (std::size_t read_from = 0;;) {
    ResponseParse response;
    if (worth_parsing(upstream_buffer_, read_from, HttpLimits{})) {
      response = parse_response_head(upstream_buffer_, head.method);
    }
    if (response.state == ParseState::error) throw HttpParseError(response.error);
    if (response.state == ParseState::incomplete) {
      read_from = upstream_buffer_.size();
      if (upstream_.read_some(upstream_buffer_) == 0) {
        throw StreamError("the upstream closed the connection before its response");
      }
      continue;
    }
    read_from = 0;
    upstream_buffer_.erase(0, response.consumed);
    HttpResponseHead &answer = response.head;
    if (answer.status == 101) {
      throw HttpParseError({502, "the upstream switched protocols, which the proxy does not"});
    }
    const BodyFraming framing = answer.framing;
    const std::uint64_t length = answer.content_length;
    const bool interim = answer.status >= 100 && answer.status < 200;
    if (interim && client_minor == 0) continue;  // HTTP/1.0 has no interim responses
    // An HTTP/1.0 client cannot read chunks: it gets the bytes and the connection's end.
    const bool chunks_out = client_minor == 1;
    erase_hop_by_hop_headers(answer.headers);
    if (chunks_out || framing != BodyFraming::chunked) set_framing(answer.headers, framing, length);
    const bool reusable =
        client_keeps && answer.keep_alive && chunks_out && framing != BodyFraming::until_close;
    if (!interim) answer.headers.push_back({"Connection", reusable ? "keep-alive" : "close"});
    answer.minor_version = 1;
    response_started_ = true;
    std::string head_out = serialize_response_head(answer);
    if (interim) {
      client_.write_all(head_out);
      continue;
    }
    // A small body already read goes out with its head, in one write.
    if (framing == BodyFraming::content_length && length <= upstream_buffer_.size()) {
      head_out.append(upstream_buffer_, 0, static_cast<std::size_t>(length));
      upstream_buffer_.erase(0, static_cast<std::size_t>(length));
      client_.write_all(head_out);
      return {reusable, answer.status};
    }
    client_.write_all(head_out);
    relay_body(upstream_, upstream_buffer_, client_, framing, length, "the upstream's response",
               chunks_out);
    return {reusable, answer.status};
  }
}

const char *reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 421:
      return "Misdirected Request";
    case 431:
      return "Request Header Fields Too Large";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

std::string proxy_response(int status, std::string_view body) {
  std::string text = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) + "\r\n";
  text += "Content-Type: text/plain; charset=utf-8\r\n";
  text += "Content-Length: " + std::to_string(body.size() + 1) + "\r\n";
  text += "Connection: close\r\n\r\n";
  text += body;
  text += "\n";
  return text;
}

}  // namespace sandbox_host::egress
