#include "proxy_forwarder.hpp"

#include <sandbox_host/backends/setup_error.hpp>
#include <sandbox_host/relay_direction.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <unordered_map>

namespace sandbox_host::namespaces {
namespace {

using backends::SetupError;
using backends::throw_errno;
using Clock = std::chrono::steady_clock;

constexpr const char *kStep = "proxy";
// Each relayed connection holds two sockets and, once both ways carry bulk data, two pipes.
constexpr rlim_t kDescriptorsPerConnection = 6;
// Kept free for everything else the init holds.
constexpr rlim_t kSpareDescriptors = 16;
constexpr std::size_t kMaxConnections = 4096;
// How long an accepted client waits for room in the proxy's accept queue, asking this often.
constexpr std::chrono::seconds kConnectPatience{10};
constexpr std::chrono::milliseconds kConnectRetry{10};
// What one direction may move before the next connection's turn.
constexpr std::size_t kBytesPerTurn = 1 << 20;
// The init grows no pipe past the default 64 KiB: its pages count against the user's
// pipe quota (relay_direction.hpp), which every sandbox of the user shares.
constexpr std::size_t kLargePipes = 0;

// A client that gets no relay learns it from a reset, not from an orderly end that would
// pass a truncated answer off as whole.
void reset(UniqueFd client) {
  const linger abort{1, 0};
  ::setsockopt(client.get(), SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
}

uint32_t events(bool read, bool write) noexcept {
  return (read ? uint32_t{EPOLLIN} : 0u) | (write ? uint32_t{EPOLLOUT} : 0u);
}

// A socket as the relay's epoll set has it: the events it is registered for, 0 for none.
// An fd is only registered while it is waited on: a hung-up socket would otherwise be
// reported again and again while its connection waits on the other side.
struct Watched {
  UniqueFd fd;
  uint32_t events = 0;
};

struct Connection {
  Connection(UniqueFd client_fd, UniqueFd upstream_fd)
      : client{std::move(client_fd)},
        upstream{std::move(upstream_fd)},
        up(client.fd.get(), upstream.fd.get()),
        down(upstream.fd.get(), client.fd.get()) {}

  Watched client, upstream;
  RelayDirection up, down;  // client -> proxy, proxy -> client
  bool failed = false;
  bool over = false;
};

// A client accepted while the proxy's accept queue was full.
struct Waiting {
  UniqueFd client;
  Clock::time_point give_up;
};

class Relay {
 public:
  Relay(UniqueFd listener, std::string socket_path)
      : listener_{std::move(listener)}, socket_path_(std::move(socket_path)) {
    if (socket_path_.size() >= sizeof(sockaddr_un::sun_path)) {
      throw SetupError(kStep, socket_path_ + ": too long for a unix socket address");
    }
    epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_) throw_errno(kStep, "epoll_create1");
    max_connections_ = connection_budget();
  }

  [[noreturn]] void run() {
    std::array<epoll_event, 64> ready{};
    for (;;) {
      watch_listener();
      const int timeout = waiting_.empty() ? -1 : static_cast<int>(kConnectRetry.count());
      const int n =
          ::epoll_wait(epoll_.get(), ready.data(), static_cast<int>(ready.size()), timeout);
      if (n < 0 && errno != EINTR) throw_errno(kStep, "epoll_wait");
      for (int i = 0; i < n; ++i) {
        if (ready[i].data.ptr == &listener_) {
          accept_clients();
        } else {
          serve(*static_cast<Connection *>(ready[i].data.ptr));
        }
      }
      connect_waiting();
      // Only now: one batch may hold events of both sockets of a connection that ended.
      std::erase_if(connections_, [](const auto &entry) { return entry.second->over; });
    }
  }

 private:
  // As many connections as the descriptors allow, the limit raised as far as it goes: the
  // plugin was started before, so its own limit stays as it was.
  static std::size_t connection_budget() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
      limit.rlim_cur = limit.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &limit);
      ::getrlimit(RLIMIT_NOFILE, &limit);
    }
    const rlim_t usable = limit.rlim_cur > kSpareDescriptors + kDescriptorsPerConnection
                              ? limit.rlim_cur - kSpareDescriptors
                              : kDescriptorsPerConnection;
    return std::min<std::size_t>(kMaxConnections, usable / kDescriptorsPerConnection);
  }

  void watch(Watched &socket, uint32_t wanted, void *tag) {
    if (wanted == socket.events) return;
    const int op =
        socket.events == 0 ? EPOLL_CTL_ADD : (wanted == 0 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD);
    epoll_event event{};
    event.events = wanted;
    event.data.ptr = tag;
    if (::epoll_ctl(epoll_.get(), op, socket.fd.get(), &event) != 0) {
      throw_errno(kStep, "epoll_ctl");
    }
    socket.events = wanted;
  }

  // New clients wait in the kernel's queue while others wait for the proxy or the budget is
  // spent.
  void watch_listener() {
    const bool room = waiting_.empty() && connections_.size() < max_connections_;
    watch(listener_, events(room, false), &listener_);
  }

  void accept_clients() {
    while (waiting_.empty() && connections_.size() < max_connections_) {
      UniqueFd client(
          ::accept4(listener_.fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (!client) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EAGAIN || errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
            errno == ENOMEM) {
          return;  // nothing more now; the queue keeps what is left
        }
        throw_errno(kStep, "accept");
      }
      const int one = 1;
      ::setsockopt(client.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      relay_or_wait({std::move(client), Clock::now() + kConnectPatience});
    }
  }

  // Connects a client to the proxy, or keeps it waiting while the proxy's queue is full.
  void relay_or_wait(Waiting client) {
    UniqueFd upstream(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!upstream) return reset(std::move(client.client));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
    if (::connect(upstream.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address) ==
        0) {
      start(std::move(client.client), std::move(upstream));
    } else if (errno == EAGAIN && Clock::now() < client.give_up) {
      waiting_.push_back(std::move(client));
    } else {
      reset(std::move(client.client));
    }
  }

  void connect_waiting() {
    for (std::size_t n = waiting_.size(); n > 0; --n) {
      Waiting client = std::move(waiting_.front());
      waiting_.pop_front();
      relay_or_wait(std::move(client));
    }
  }

  void start(UniqueFd client, UniqueFd upstream) {
    auto connection = std::make_unique<Connection>(std::move(client), std::move(upstream));
    Connection &added = *connection;
    connections_.emplace(&added, std::move(connection));
    serve(added);
  }

  // Moves what both directions can, a bounded amount so that one busy connection cannot
  // starve the others (the epoll set is level-triggered), then waits on exactly what each
  // direction still needs.
  void serve(Connection &c) {
    if (c.over) return;
    try {
      c.up.move(scratch_, "client", kBytesPerTurn);
      c.down.move(scratch_, "proxy", kBytesPerTurn);
    } catch (const std::system_error &) {
      c.failed = true;
    }
    if (c.failed || (c.up.done() && c.down.done())) {
      end(c);
      return;
    }
    watch(c.client, events(c.up.wants_read(), c.down.wants_write()), &c);
    watch(c.upstream, events(c.down.wants_read(), c.up.wants_write()), &c);
  }

  void end(Connection &c) {
    watch(c.client, 0, &c);
    watch(c.upstream, 0, &c);
    c.up.release(scratch_);
    c.down.release(scratch_);
    if (c.failed) reset(std::move(c.client.fd));
    c.over = true;
  }

  Watched listener_;
  std::string socket_path_;
  UniqueFd epoll_;
  std::size_t max_connections_ = 1;
  std::unordered_map<const Connection *, std::unique_ptr<Connection>> connections_;
  std::deque<Waiting> waiting_;
  RelayScratch scratch_{kLargePipes};
};

}  // namespace

UniqueFd listen_on_loopback(std::uint16_t port) {
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listener) throw_errno(kStep, "socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (::bind(listener.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0) {
    throw_errno(kStep, "listen on 127.0.0.1:" + std::to_string(port));
  }
  if (::listen(listener.get(), SOMAXCONN) != 0) {
    throw_errno(kStep, "listen on 127.0.0.1:" + std::to_string(port));
  }
  return listener;
}

void relay_forever(UniqueFd listener, const std::string &socket_path) {
  Relay(std::move(listener), socket_path).run();
}

}  // namespace sandbox_host::namespaces
