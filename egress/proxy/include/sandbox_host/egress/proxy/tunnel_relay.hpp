// Opaque tunnels (CONNECT, SOCKS5) once both ends are connected: one thread, one epoll set.
// Small reads (a request, a short reply) are copied through one buffer of the thread's;
// once a direction carries bulk data its bytes move socket -> pipe -> socket with
// splice(2), never through userspace, the pipe grown to 1 MiB for up to 16 directions at
// once. Idle tunnels cost two sockets and a few hundred bytes; a pipe is made only for a
// direction that carries bulk data.
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace sandbox_host::egress {

struct TunnelLimits {
  std::chrono::milliseconds idle{std::chrono::minutes(5)};  // no byte either way
  // One side said it is done sending and the other has not finished within this.
  std::chrono::milliseconds half_open{std::chrono::minutes(1)};
};

class TunnelRelay {
 public:
  // say: one line when a tunnel ends for a reason other than both sides closing.
  TunnelRelay(TunnelLimits limits, std::function<void(const std::string &)> say);
  ~TunnelRelay();  // ends every tunnel
  TunnelRelay(const TunnelRelay &) = delete;
  TunnelRelay &operator=(const TunnelRelay &) = delete;

  // Takes both sockets, which must be non-blocking; `to_upstream` are bytes the client
  // sent past its request that the proxy already read. `label` names the tunnel in say()
  // lines.
  void add(UniqueFd client, UniqueFd upstream, std::string to_upstream, std::string label);

  std::size_t active() const { return active_.load(); }

 private:
  struct Tunnel;
  struct Side;
  void run(std::stop_token stop);
  // What one epoll event on one of a tunnel's sockets asks for.
  void pump(Tunnel &tunnel, bool client_side, std::uint32_t events);
  // Asks for EPOLLOUT on a socket once a direction has to wait to write to it.
  void watch_writes(Tunnel &tunnel);
  void close_tunnel(Tunnel *tunnel, const std::string &why);
  void expire(std::chrono::steady_clock::time_point now);

  TunnelLimits limits_;
  std::function<void(const std::string &)> say_;
  UniqueFd epoll_;
  UniqueFd wake_;  // eventfd: a tunnel could not be watched, or stop
  std::atomic<std::size_t> active_{0};
  struct Queue;
  std::unique_ptr<Queue> queue_;
  std::jthread thread_;
};

}  // namespace sandbox_host::egress
