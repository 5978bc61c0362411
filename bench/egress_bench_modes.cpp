// egress_bench's measurements, one per invocation: bulk throughput, connect + GET latency,
// TLS keep-alive requests/s, and the idle tunnels with the server they end at (hold).

#include "egress_bench.hpp"

#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace egress_bench {

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

}  // namespace egress_bench
