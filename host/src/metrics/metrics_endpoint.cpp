#include <sandbox_host/host/metrics/metrics_endpoint.hpp>
#include <sandbox_host/host/metrics/scrape_peer.hpp>
#include <sandbox_host/host/metrics/scrape_response.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <arpa/inet.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

namespace sandbox_host::metrics {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string &what) {
  throw std::system_error(errno, std::generic_category(), what);
}

UniqueFd stream_socket(int family, const std::string &what) {
  UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) fail("metrics: cannot make the socket for " + what);
  return fd;
}

UniqueFd listen_tcp(const egress::LoopbackEndpoint &listen, std::uint16_t &bound_port) {
  const std::string what = "metrics.listen " + listen.to_string();
  socklen_t length = 0;
  sockaddr_storage address = listen.address.to_sockaddr(listen.port, length);
  UniqueFd fd = stream_socket(address.ss_family, what);
  const int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&address), length) != 0 ||
      ::listen(fd.get(), SOMAXCONN) != 0) {
    fail("metrics: cannot listen on " + what);
  }
  socklen_t bound_length = sizeof address;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr *>(&address), &bound_length);
  bound_port =
      ntohs(address.ss_family == AF_INET ? reinterpret_cast<sockaddr_in &>(address).sin_port
                                         : reinterpret_cast<sockaddr_in6 &>(address).sin6_port);
  return fd;
}

UniqueFd listen_unix(const std::filesystem::path &path, const std::vector<uid_t> &scrapers) {
  const std::string what = "metrics.socket " + path.string();
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.native().size() >= sizeof address.sun_path) {
    throw std::invalid_argument(what + " is too long for a unix socket");
  }
  std::strcpy(address.sun_path, path.c_str());
  struct stat existing {};
  // A socket left by a serve that died goes; anything else at the path is the operator's.
  if (::lstat(path.c_str(), &existing) == 0) {
    if (!S_ISSOCK(existing.st_mode)) {
      throw std::invalid_argument(what + " exists and is not a socket");
    }
    ::unlink(path.c_str());
  }
  UniqueFd fd = stream_socket(AF_UNIX, what);
  if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
    fail("metrics: cannot bind " + what);
  }
  // The peer check decides who is served; the mode keeps other users from trying unless
  // some are listed, who then need to connect: the socket's directory is the operator's
  // to keep the rest out (docs/operations.md).
  ::chmod(path.c_str(), scrapers.empty() ? 0600 : 0666);
  if (::listen(fd.get(), SOMAXCONN) != 0) fail("metrics: cannot listen on " + what);
  return fd;
}

struct Accepted {
  UniqueFd fd;
  bool tcp = false;
};

}  // namespace

struct MetricsEndpoint::Impl {
  Impl(const MetricsConfig &config, HostMetrics &metrics, AuditSink &audit)
      : config(config), metrics(metrics), audit(audit), stop(::eventfd(0, EFD_CLOEXEC)) {
    if (!stop) fail("metrics: eventfd");
    if (config.listen) tcp = listen_tcp(*config.listen, port);
    if (!config.socket.empty()) unix_listener = listen_unix(config.socket, config.scrapers);
    for (unsigned i = 0; i < config.max_connections; ++i) {
      workers.emplace_back([this](std::stop_token stopping) { work(stopping); });
    }
    acceptor = std::jthread([this] { accept_loop(); });
  }

  ~Impl() {
    const std::uint64_t one = 1;
    // Readable from now on: the acceptor and every connection's wait end.
    [[maybe_unused]] const auto written = ::write(stop.get(), &one, sizeof one);
    acceptor.join();
    for (auto &worker : workers) worker.request_stop();
    queued.notify_all();
    workers.clear();
    if (unix_listener) ::unlink(config.socket.c_str());
  }

  void refuse(const std::string &rule, const std::string &what) {
    audit.record({"metrics", "", rule, what,
                  "the metrics endpoint serves unsandboxed processes of serve's uid and of "
                  "metrics.scrapers' users, docs/operations.md, \"Metrics\""});
  }

  void accept_from(int listener, bool is_tcp) {
    for (;;) {
      UniqueFd fd(::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (!fd) return;  // EAGAIN, or out of descriptors: the rest waits in the backlog
      std::unique_lock lock(mutex);
      if (busy + queue.size() >= config.max_connections) {
        lock.unlock();
        // Closed unanswered: a flood of connections holds no thread and gets no bytes.
        refuse("metrics-busy", std::to_string(config.max_connections) +
                                   " connections are served already, as many as "
                                   "metrics.max_connections allows");
        continue;
      }
      queue.push_back({std::move(fd), is_tcp});
      lock.unlock();
      queued.notify_one();
    }
  }

  void accept_loop() {
    for (;;) {
      std::vector<pollfd> fds{{stop.get(), POLLIN, 0}};
      if (tcp) fds.push_back({tcp.get(), POLLIN, 0});
      if (unix_listener) fds.push_back({unix_listener.get(), POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents != 0) return;
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents != 0) accept_from(fds[i].fd, fds[i].fd == tcp.get());
      }
    }
  }

  void work(std::stop_token stopping) {
    egress::PeerIdentifier peers;  // one per thread: it keeps its netlink socket
    for (;;) {
      Accepted next;
      {
        std::unique_lock lock(mutex);
        if (!queued.wait(lock, stopping, [&] { return !queue.empty(); })) return;
        next = std::move(queue.front());
        queue.pop_front();
        ++busy;
      }
      serve(next, peers);
      std::lock_guard lock(mutex);
      --busy;
    }
  }

  enum class Waited { ready, timed_out, ended };

  // Waits until fd is ready for events, the deadline passes or the endpoint stops.
  Waited wait(int fd, short events, Clock::time_point deadline) {
    for (;;) {
      const auto now = Clock::now();
      if (now >= deadline) return Waited::timed_out;
      // Rounded up, so that a poll that times out has reached the deadline.
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
      pollfd fds[2] = {{fd, events, 0}, {stop.get(), POLLIN, 0}};
      const int ready = ::poll(fds, 2, static_cast<int>(left));
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0 || fds[1].revents != 0) return Waited::ended;
      if (ready > 0) return Waited::ready;
    }
  }

  // The request head, read until complete, refused, or the deadline; nullopt when the
  // client left or the time ran out (timed_out says which).
  std::optional<egress::RequestParse> read_head(int fd, Clock::time_point deadline,
                                                bool &timed_out) {
    std::string buffer;
    char chunk[2048];
    for (;;) {
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        const Waited waited = wait(fd, POLLIN, deadline);
        if (waited == Waited::ready) continue;
        timed_out = waited == Waited::timed_out;
        return std::nullopt;
      }
      if (n <= 0) return std::nullopt;
      buffer.append(chunk, static_cast<std::size_t>(n));
      const bool line_ended = std::memchr(chunk, '\n', static_cast<std::size_t>(n)) != nullptr;
      if (!line_ended && buffer.size() <= kScrapeLimits.max_head_bytes) continue;
      egress::RequestParse parsed = egress::parse_request_head(buffer, kScrapeLimits);
      if (parsed.state != egress::ParseState::incomplete) return parsed;
    }
  }

  void write_all(int fd, std::string_view bytes, Clock::time_point deadline) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        const Waited waited = wait(fd, POLLOUT, deadline);
        if (waited == Waited::ready) continue;
        if (waited == Waited::timed_out) {
          refuse("metrics-request", "a client that did not read its answer within " +
                                        std::to_string(config.request_timeout.count()) + " ms");
        }
        return;
      }
      if (n < 0) return;  // the client left
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  void serve(const Accepted &connection, egress::PeerIdentifier &peers) {
    const int fd = connection.fd.get();
    try {
      require_unsandboxed_scraper(fd, connection.tcp, peers, config.scrapers);
    } catch (const PeerRefusal &e) {
      refuse(e.rule(), e.what());
      return;
    }
    const auto deadline = Clock::now() + config.request_timeout;
    bool timed_out = false;
    const auto parsed = read_head(fd, deadline, timed_out);
    if (!parsed) {
      if (timed_out) {
        const std::string why =
            "no complete request within " + std::to_string(config.request_timeout.count()) + " ms";
        refuse("metrics-request", why);
        write_all(fd, error_response(408, why), Clock::now() + config.request_timeout);
      }
      return;
    }
    const ScrapeAnswer answer = scrape_response(*parsed, [&] { return metrics.exposition(); });
    if (answer.status != 200) {
      refuse("metrics-request", "a request answered " + std::to_string(answer.status) + ": " +
                                    (parsed->state == egress::ParseState::error
                                         ? parsed->error.reason
                                         : parsed->head.method + " " + parsed->head.origin_target));
    }
    write_all(fd, answer.response, deadline);
  }

  const MetricsConfig config;
  HostMetrics &metrics;
  AuditSink &audit;
  UniqueFd stop;  // an eventfd, readable once the endpoint stops
  UniqueFd tcp, unix_listener;
  std::uint16_t port = 0;
  std::mutex mutex;
  std::condition_variable_any queued;
  std::deque<Accepted> queue;  // accepted, waiting for a worker
  std::size_t busy = 0;        // being served
  std::vector<std::jthread> workers;
  std::jthread acceptor;
};

MetricsEndpoint::MetricsEndpoint(const MetricsConfig &config, HostMetrics &metrics,
                                 AuditSink &audit)
    : impl_(std::make_unique<Impl>(config, metrics, audit)) {}

MetricsEndpoint::~MetricsEndpoint() = default;

std::string MetricsEndpoint::description() const {
  std::string text;
  if (impl_->tcp) {
    egress::LoopbackEndpoint bound = *impl_->config.listen;
    bound.port = impl_->port;
    text = "http://" + bound.to_string() + "/metrics";
  }
  if (impl_->unix_listener) {
    text += (text.empty() ? "" : " and ") + ("unix:" + impl_->config.socket.string());
  }
  return text;
}

}  // namespace sandbox_host::metrics
