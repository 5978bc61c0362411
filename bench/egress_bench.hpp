// What the files of egress_bench share (egress_bench.cpp has the options and main): the
// options, the byte streams (a socket, or TLS over one) and the response reader, the
// connections and tunnels that carry them, and the measurements main runs.
#pragma once

#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace egress_bench {

using Clock = std::chrono::steady_clock;

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail_errno(const std::string &what);
std::string json_string(const std::string &text);
// "a.b.c.d:port" (IPv4 only: the bench runs on 127.0.0.0/8).
sockaddr_in parse_address(const std::string &text);

struct Options {
  std::string mode;
  std::string connect;         // where the TCP connection goes
  std::string via = "direct";  // direct, connect, forward
  std::string target;          // name:port of the upstream, as CONNECT and Host say it
  std::string path = "/";
  std::uint64_t expect = 0;  // response body bytes
  int requests = 1000, warmup = 20, connections = 1, count = 0;
  double seconds = 5;
  std::string sni, ca, listen;
};

// The name of the upstream without its port, for Host.
std::string target_host(const Options &o);

// A byte stream: a socket, or TLS over one.
class Stream {
 public:
  virtual ~Stream() = default;
  virtual std::size_t read_some(char *buffer, std::size_t size) = 0;  // 0 at the end
  virtual void write_all(const std::string &bytes) = 0;
};

class SocketStream final : public Stream {
 public:
  explicit SocketStream(int fd) : fd_(fd) {}
  std::size_t read_some(char *buffer, std::size_t size) override {
    for (;;) {
      const ssize_t n = ::recv(fd_, buffer, size, 0);
      if (n >= 0) return static_cast<std::size_t>(n);
      if (errno != EINTR) fail_errno("recv");
    }
  }
  void write_all(const std::string &bytes) override {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail_errno("send");
      sent += static_cast<std::size_t>(n);
    }
  }

 private:
  int fd_;
};

std::string ssl_error(const std::string &what);

class TlsStream final : public Stream {
 public:
  explicit TlsStream(SSL *ssl) : ssl_(ssl) {}
  std::size_t read_some(char *buffer, std::size_t size) override {
    const int n = SSL_read(ssl_, buffer, static_cast<int>(std::min<std::size_t>(size, 1 << 30)));
    if (n > 0) return static_cast<std::size_t>(n);
    const int error = SSL_get_error(ssl_, n);
    if (error == SSL_ERROR_ZERO_RETURN) return 0;
    if (error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) return 0;
    throw Failure(ssl_error("SSL_read"));
  }
  void write_all(const std::string &bytes) override {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const int n = SSL_write(ssl_, bytes.data() + sent, static_cast<int>(bytes.size() - sent));
      if (n <= 0) throw Failure(ssl_error("SSL_write"));
      sent += static_cast<std::size_t>(n);
    }
  }

 private:
  SSL *ssl_;
};

// Reads responses from a stream: the head, then exactly Content-Length bytes of body.
class ResponseReader {
 public:
  explicit ResponseReader(Stream &stream, std::size_t buffer_size = 64 * 1024)
      : stream_(stream), buffer_(buffer_size) {}

  // The status and Content-Length (nullopt when absent) of the next response head.
  std::pair<int, std::optional<std::uint64_t>> head() {
    for (;;) {
      const auto end = pending_.find("\r\n\r\n");
      if (end != std::string::npos) {
        const std::string text = pending_.substr(0, end);
        pending_.erase(0, end + 4);
        return parse(text);
      }
      if (pending_.size() > 64 * 1024) throw Failure("a response head of more than 64 KiB");
      const std::size_t n = stream_.read_some(buffer_.data(), buffer_.size());
      if (n == 0) throw Failure("the connection ended inside a response head");
      pending_.append(buffer_.data(), n);
    }
  }

  // Reads and drops length bytes of body.
  void body(std::uint64_t length) {
    const std::uint64_t buffered = std::min<std::uint64_t>(length, pending_.size());
    pending_.erase(0, static_cast<std::size_t>(buffered));
    length -= buffered;
    while (length > 0) {
      const std::size_t n = stream_.read_some(
          buffer_.data(),
          static_cast<std::size_t>(std::min<std::uint64_t>(length, buffer_.size())));
      if (n == 0) throw Failure("the connection ended inside a response body");
      length -= n;
    }
  }

  // The head and body of a 200 response of `expect` bytes.
  void response(std::uint64_t expect) {
    const auto [status, length] = head();
    if (status != 200) throw Failure("status " + std::to_string(status) + ", want 200");
    if (!length) throw Failure("a response without Content-Length");
    if (*length != expect) {
      throw Failure("Content-Length " + std::to_string(*length) + ", want " +
                    std::to_string(expect));
    }
    body(*length);
  }

 private:
  static std::pair<int, std::optional<std::uint64_t>> parse(const std::string &text) {
    std::istringstream lines(text);
    std::string line;
    std::getline(lines, line);
    if (line.rfind("HTTP/1.", 0) != 0 || line.size() < 12) {
      throw Failure("not an HTTP response: " + line.substr(0, 80));
    }
    const int status = std::stoi(line.substr(9, 3));
    std::optional<std::uint64_t> length;
    while (std::getline(lines, line)) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (name == "content-length") length = std::stoull(line.substr(colon + 1));
    }
    return {status, length};
  }

  Stream &stream_;
  std::vector<char> buffer_;
  std::string pending_;
};

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd &&other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd &operator=(Fd &&other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

Fd connect_to(const sockaddr_in &address);
// CONNECT target through the proxy on stream; returns when the proxy answered 200.
void open_tunnel(Stream &stream, const std::string &target);
std::string get_request(const Options &o, bool keep_alive);

struct Cpu {
  double user = 0, system = 0;
  static Cpu now() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return {static_cast<double>(usage.ru_utime.tv_sec) + usage.ru_utime.tv_usec / 1e6,
            static_cast<double>(usage.ru_stime.tv_sec) + usage.ru_stime.tv_usec / 1e6};
  }
};

double seconds_since(Clock::time_point start);

// ---- the measurements (egress_bench_modes.cpp), one per invocation -------------------------

void bulk(const Options &o);
void latency(const Options &o);
void tls(const Options &o);
void raise_nofile();
void hold(const Options &o);
void idle(const Options &o);

}  // namespace egress_bench
