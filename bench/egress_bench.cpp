// The egress proxy's load generator (bench/egress_report.py runs it): one measurement per
// invocation, one JSON line on stdout. The client connects either straight to the upstream
// (nginx) or to a proxy, and reaches the upstream through it by CONNECT or by an
// absolute-form request (forward), so the same code times direct and proxied requests.
//
//   egress_bench bulk    --connect A:P [--via connect --target N:P] --path /f --expect BYTES
//   egress_bench latency --connect A:P [--via connect|forward --target N:P] --path /f
//                        --expect BYTES --requests N [--warmup W]
//   egress_bench tls     --connect A:P [--via connect --target N:443] --sni N --ca FILE
//                        --path /f --expect BYTES --connections C --seconds S
//   egress_bench idle    --connect A:P --target N:P --count N
//   egress_bench hold    --listen A:P
//
// bulk: one GET of a large file on a new connection (through a CONNECT tunnel when --via
// connect), timed from the request to its last byte; the client reads with recv(2) into a
// 1 MiB buffer. latency: N requests one after the other, each on a new connection, each
// timed from socket(2) to the last byte of the response (the tunnel's CONNECT and its 200
// inside that time), after W untimed ones. tls: C connections, each its own thread, each
// a TLS session (to the proxy's CA through the tunnel, or to the upstream directly) that
// sends keep-alive GETs back to back for S seconds after all have finished their
// handshake. idle: N tunnels opened through the proxy one after the other and held without
// a byte; prints one line when they are open, waits for a line (or the end) on stdin,
// closes them and prints another. hold: the idle server those tunnels end at (a process of
// its own, since RLIMIT_NOFILE bounds each process), accepting and holding every
// connection. A read waits 30 s at most (SO_RCVTIMEO).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail_errno(const std::string &what) {
  throw Failure(what + ": " + std::strerror(errno));
}

std::string json_string(const std::string &text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// "a.b.c.d:port" (IPv4 only: the bench runs on 127.0.0.0/8).
sockaddr_in parse_address(const std::string &text) {
  const auto colon = text.rfind(':');
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (colon == std::string::npos ||
      ::inet_pton(AF_INET, text.substr(0, colon).c_str(), &address.sin_addr) != 1) {
    throw Failure("\"" + text + "\" is not an IPv4 address and port");
  }
  address.sin_port = htons(static_cast<std::uint16_t>(std::stoul(text.substr(colon + 1))));
  return address;
}

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

Options parse_options(int argc, char **argv) {
  if (argc < 2) throw Failure("usage: egress_bench bulk|latency|tls|idle --option value ...");
  Options o;
  o.mode = argv[1];
  std::map<std::string, std::string *> strings{
      {"--connect", &o.connect}, {"--via", &o.via}, {"--target", &o.target}, {"--path", &o.path},
      {"--sni", &o.sni},         {"--ca", &o.ca},   {"--listen", &o.listen}};
  std::map<std::string, int *> integers{{"--requests", &o.requests},
                                        {"--warmup", &o.warmup},
                                        {"--connections", &o.connections},
                                        {"--count", &o.count}};
  for (int i = 2; i < argc; i += 2) {
    const std::string key = argv[i];
    if (i + 1 >= argc) throw Failure(key + " needs a value");
    const std::string value = argv[i + 1];
    if (auto s = strings.find(key); s != strings.end()) {
      *s->second = value;
    } else if (auto n = integers.find(key); n != integers.end()) {
      *n->second = std::stoi(value);
    } else if (key == "--expect") {
      o.expect = std::stoull(value);
    } else if (key == "--seconds") {
      o.seconds = std::stod(value);
    } else {
      throw Failure("unknown option " + key);
    }
  }
  if (o.connect.empty() && o.mode != "hold") throw Failure("--connect is required");
  if (o.via != "direct" && o.via != "connect" && o.via != "forward") {
    throw Failure("--via is direct, connect or forward");
  }
  if (o.via != "direct" && o.target.empty()) throw Failure("--via " + o.via + " needs --target");
  return o;
}

// The name of the upstream without its port, for Host.
std::string target_host(const Options &o) {
  if (o.target.empty()) return "localhost";
  return o.target.substr(0, o.target.rfind(':'));
}

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

std::string ssl_error(const std::string &what) {
  std::string text = what;
  while (const unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof buffer);
    text += std::string(": ") + buffer;
  }
  return text;
}

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

Fd connect_to(const sockaddr_in &address) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) fail_errno("socket");
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // No read waits for ever: a proxy that stops answering fails the measurement.
  const timeval timeout{30, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  for (;;) {
    if (::connect(fd.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address) == 0) {
      return fd;
    }
    if (errno != EINTR) fail_errno("connect");
  }
}

// CONNECT target through the proxy on stream; returns when the proxy answered 200.
void open_tunnel(Stream &stream, const std::string &target) {
  stream.write_all("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n");
  // Read byte by byte up to the end of the head: nothing past it may be consumed, since
  // the tunnel's bytes (the upstream's, or TLS) follow.
  std::string head;
  char c;
  while (head.size() < 4 || head.compare(head.size() - 4, 4, "\r\n\r\n") != 0) {
    if (stream.read_some(&c, 1) == 0) throw Failure("the proxy closed the CONNECT");
    head += c;
    if (head.size() > 16 * 1024) throw Failure("a CONNECT answer of more than 16 KiB");
  }
  if (head.rfind("HTTP/1.", 0) != 0 || head.size() < 12 || head.substr(9, 3) != "200") {
    throw Failure("CONNECT " + target + " answered: " + head.substr(0, head.find('\r')));
  }
}

std::string get_request(const Options &o, bool keep_alive) {
  const std::string host = target_host(o);
  const std::string target = o.via == "forward" ? "http://" + o.target + o.path : o.path;
  return "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: egress_bench\r\n" +
         (keep_alive ? "" : "Connection: close\r\n") + "\r\n";
}

struct Cpu {
  double user = 0, system = 0;
  static Cpu now() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return {static_cast<double>(usage.ru_utime.tv_sec) + usage.ru_utime.tv_usec / 1e6,
            static_cast<double>(usage.ru_stime.tv_sec) + usage.ru_stime.tv_usec / 1e6};
  }
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// ---- bulk ----------------------------------------------------------------------------------

void bulk(const Options &o) {
  const sockaddr_in address = parse_address(o.connect);
  const auto start = Clock::now();
  Fd fd = connect_to(address);
  SocketStream stream(fd.get());
  if (o.via == "connect") open_tunnel(stream, o.target);
  const double setup = seconds_since(start);
  const Cpu cpu0 = Cpu::now();
  const auto sent = Clock::now();
  stream.write_all(get_request(o, false));
  ResponseReader reader(stream, 1 << 20);
  reader.response(o.expect);
  const double seconds = seconds_since(sent);
  const Cpu cpu1 = Cpu::now();
  std::cout << "{\"mode\":\"bulk\",\"via\":" << json_string(o.via) << ",\"bytes\":" << o.expect
            << ",\"seconds\":" << seconds << ",\"setup_s\":" << setup
            << ",\"client_user_s\":" << cpu1.user - cpu0.user
            << ",\"client_sys_s\":" << cpu1.system - cpu0.system << "}" << std::endl;
}

// ---- latency -------------------------------------------------------------------------------

void latency(const Options &o) {
  const sockaddr_in address = parse_address(o.connect);
  const std::string request = get_request(o, false);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(o.requests));
  const Cpu cpu0 = Cpu::now();
  const auto begin = Clock::now();
  for (int i = -o.warmup; i < o.requests; ++i) {
    const auto start = Clock::now();
    Fd fd = connect_to(address);
    SocketStream stream(fd.get());
    if (o.via == "connect") open_tunnel(stream, o.target);
    stream.write_all(request);
    ResponseReader reader(stream);
    reader.response(o.expect);
    const auto end = Clock::now();  // the last byte is in; the close is not timed
    if (i >= 0) samples.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  const double wall = seconds_since(begin);
  const Cpu cpu1 = Cpu::now();
  std::cout << "{\"mode\":\"latency\",\"via\":" << json_string(o.via)
            << ",\"requests\":" << o.requests << ",\"warmup\":" << o.warmup
            << ",\"wall_s\":" << wall
            << ",\"client_cpu_s\":" << (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
            << ",\"samples_us\":[";
  for (std::size_t i = 0; i < samples.size(); ++i) {
    std::cout << (i ? "," : "") << static_cast<long long>(samples[i] * 1000) / 1000.0;
  }
  std::cout << "]}" << std::endl;
}

// ---- tls -----------------------------------------------------------------------------------

struct SslCtxDeleter {
  void operator()(SSL_CTX *ctx) const { SSL_CTX_free(ctx); }
};
struct SslDeleter {
  void operator()(SSL *ssl) const { SSL_free(ssl); }
};

void tls(const Options &o) {
  const sockaddr_in address = parse_address(o.connect);
  std::unique_ptr<SSL_CTX, SslCtxDeleter> context(SSL_CTX_new(TLS_client_method()));
  if (!context) throw Failure(ssl_error("SSL_CTX_new"));
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
  if (SSL_CTX_load_verify_locations(context.get(), o.ca.c_str(), nullptr) != 1) {
    throw Failure(ssl_error("cannot load " + o.ca));
  }
  static const unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_CTX_set_alpn_protos(context.get(), kHttp11, sizeof kHttp11);
  const std::string request = get_request(o, true);
  const int threads = std::max(1, o.connections);

  struct Result {
    std::uint64_t requests = 0;
    std::vector<double> samples;  // µs, every request of the timed window
    std::string error, protocol, cipher;
  };
  std::vector<Result> results(static_cast<std::size_t>(threads));
  // The window starts when the last handshake is done, the same instant for every thread.
  std::atomic<Clock::time_point::rep> start_at{0};
  auto mark_start = [&start_at]() noexcept {
    start_at.store(Clock::now().time_since_epoch().count());
  };
  std::barrier ready(threads, mark_start);
  const Cpu cpu0 = Cpu::now();
  std::vector<std::jthread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      Result &result = results[static_cast<std::size_t>(t)];
      bool arrived = false;
      try {
        Fd fd = connect_to(address);
        SocketStream plain(fd.get());
        if (o.via == "connect") open_tunnel(plain, o.target);
        std::unique_ptr<SSL, SslDeleter> ssl(SSL_new(context.get()));
        SSL_set_tlsext_host_name(ssl.get(), o.sni.c_str());
        SSL_set1_host(ssl.get(), o.sni.c_str());
        SSL_set_fd(ssl.get(), fd.get());
        if (SSL_connect(ssl.get()) != 1) throw Failure(ssl_error("TLS handshake"));
        result.protocol = SSL_get_version(ssl.get());
        result.cipher = SSL_get_cipher_name(ssl.get());
        TlsStream stream(ssl.get());
        ResponseReader reader(stream);
        // One untimed request: the connection and the proxy's upstream session are open.
        stream.write_all(request);
        reader.response(o.expect);
        arrived = true;
        ready.arrive_and_wait();
        const Clock::time_point begin{Clock::duration(start_at.load())};
        const auto deadline = begin + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(o.seconds));
        result.samples.reserve(200000);
        for (;;) {
          const auto sent = Clock::now();
          if (sent >= deadline) break;
          stream.write_all(request);
          reader.response(o.expect);
          const auto done = Clock::now();
          if (done > deadline) break;  // only requests answered within the window count
          ++result.requests;
          result.samples.push_back(std::chrono::duration<double, std::micro>(done - sent).count());
        }
        SSL_shutdown(ssl.get());
      } catch (const std::exception &e) {
        result.error = e.what();
        if (!arrived) ready.arrive_and_drop();
      }
    });
  }
  workers.clear();
  std::uint64_t total = 0;
  std::vector<double> all;
  std::string errors, protocol, cipher;
  for (const auto &r : results) {
    total += r.requests;
    all.insert(all.end(), r.samples.begin(), r.samples.end());
    if (!r.error.empty() && errors.empty()) errors = r.error;
    if (!r.protocol.empty()) protocol = r.protocol, cipher = r.cipher;
  }
  std::sort(all.begin(), all.end());
  auto pct = [&](double q) {
    return all.empty() ? 0.0
                       : all[static_cast<std::size_t>(q * static_cast<double>(all.size() - 1))];
  };
  int failed = 0;
  for (const auto &r : results) failed += r.error.empty() ? 0 : 1;
  const Cpu cpu1 = Cpu::now();
  std::cout << "{\"mode\":\"tls\",\"via\":" << json_string(o.via)
            << ",\"client_cpu_s\":" << (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
            << ",\"connections\":" << threads << ",\"seconds\":" << o.seconds
            << ",\"requests\":" << total
            << ",\"requests_per_s\":" << static_cast<double>(total) / o.seconds
            << ",\"p50_us\":" << pct(0.5) << ",\"p99_us\":" << pct(0.99)
            << ",\"failed_connections\":" << failed << ",\"first_error\":" << json_string(errors)
            << ",\"protocol\":" << json_string(protocol) << ",\"cipher\":" << json_string(cipher)
            << "}" << std::endl;
}

// ---- idle ----------------------------------------------------------------------------------

void raise_nofile() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// The idle server: accepts and holds every connection, reads nothing, sends nothing. A
// line on stdin prints how many it holds; the end of stdin closes them.
void hold(const Options &o) {
  const sockaddr_in listen_at = parse_address(o.listen);
  Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.get() < 0) fail_errno("socket");
  const int one = 1;
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(listener.get(), reinterpret_cast<const sockaddr *>(&listen_at), sizeof listen_at) != 0)
    fail_errno("bind " + o.listen);
  if (::listen(listener.get(), 4096) != 0) fail_errno("listen");
  std::vector<Fd> held;
  std::atomic<int> accepted{0};
  std::jthread server([&] {
    for (;;) {
      const int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // shut down, or out of descriptors
      }
      held.emplace_back(fd);
      ++accepted;
    }
  });
  std::cout << "{\"mode\":\"hold\",\"state\":\"listening\"}" << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::cout << "{\"mode\":\"hold\",\"accepted\":" << accepted.load() << "}" << std::endl;
  }
  ::shutdown(listener.get(), SHUT_RDWR);
  server.join();
  std::cout << "{\"mode\":\"hold\",\"state\":\"closed\",\"accepted\":" << accepted.load() << "}"
            << std::endl;
}

// count tunnels through the proxy to --target, opened one after the other and held
// without a byte; a line on stdin (or its end) closes them.
void idle(const Options &o) {
  if (o.count < 1) throw Failure("--count must be at least 1");
  const sockaddr_in proxy = parse_address(o.connect);
  std::vector<Fd> tunnels;
  tunnels.reserve(static_cast<std::size_t>(o.count));
  std::string first_error;
  int failed = 0;
  const auto start = Clock::now();
  for (int i = 0; i < o.count && failed < 20; ++i) {
    try {
      Fd fd = connect_to(proxy);
      SocketStream stream(fd.get());
      open_tunnel(stream, o.target);
      tunnels.push_back(std::move(fd));
    } catch (const std::exception &e) {
      if (first_error.empty()) first_error = e.what();
      ++failed;
    }
  }
  const double opening = seconds_since(start);
  std::cout << "{\"mode\":\"idle\",\"state\":\"open\",\"count\":" << o.count
            << ",\"opened\":" << tunnels.size() << ",\"failed\":" << failed
            << ",\"first_error\":" << json_string(first_error) << ",\"opening_s\":" << opening
            << "}" << std::endl;
  std::string line;
  std::getline(std::cin, line);
  // Still open? A tunnel the proxy closed meanwhile reads as the end of the stream.
  int closed_meanwhile = 0;
  for (const auto &fd : tunnels) {
    char c;
    const ssize_t n = ::recv(fd.get(), &c, 1, MSG_DONTWAIT | MSG_PEEK);
    if (n == 0 || (n < 0 && errno != EAGAIN)) ++closed_meanwhile;
  }
  tunnels.clear();
  std::cout << "{\"mode\":\"idle\",\"state\":\"closed\",\"closed_meanwhile\":" << closed_meanwhile
            << "}" << std::endl;
}

}  // namespace

int main(int argc, char **argv) {
  try {
    const Options o = parse_options(argc, argv);
    raise_nofile();
    if (o.mode == "bulk") {
      bulk(o);
    } else if (o.mode == "latency") {
      latency(o);
    } else if (o.mode == "tls") {
      tls(o);
    } else if (o.mode == "idle") {
      idle(o);
    } else if (o.mode == "hold") {
      hold(o);
    } else {
      throw Failure("unknown mode " + o.mode);
    }
  } catch (const std::exception &e) {
    std::cerr << "egress_bench: " << e.what() << std::endl;
    return 1;
  }
  return 0;
}
