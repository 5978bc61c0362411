#include <sandbox_host/host/egress/tunnel_relay.hpp>

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <span>
#include <system_error>
#include <vector>

namespace sandbox_host::egress {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kSpliceChunk = 1 << 20;
constexpr std::size_t kCopyChunk = 16 << 10;
// A bulk direction's pipe is grown to 1 MiB (the default pipe-max-size), which moves a GiB
// with a sixteenth of the splices of a default 64 KiB pipe and about a third less of the
// relay's CPU (docs/benchmarks.md).
// Pipe pages count against the user's pipe-user-pages-soft (16,384 pages by default), and
// a user past it gets small pipes in every program, so at most 16 pipes are grown at once
// (4,096 pages); the others keep the default size.
constexpr int kLargePipeBytes = 1 << 20;
constexpr std::size_t kLargePipes = 16;

[[noreturn]] void fail(const char *what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// One way through the tunnel: from's bytes go to `to`, copied while they come in small
// reads, then through a pipe of their own.
struct Direction {
  int from = -1, to = -1;
  std::string prefix;  // bytes already in userspace, sent before anything else
  UniqueFd pipe_out, pipe_in;
  bool large_pipe = false;  // grown, and counted in RelayShared::large_pipes_left
  std::size_t in_pipe = 0;
  bool eof = false;        // from sent its last byte
  bool shut_down = false;  // ... and `to` was told so
  bool done() const { return shut_down; }
};

enum class Moved { nothing, some };

// What the relay thread's moves share.
struct RelayShared {
  std::vector<char> copy_buffer = std::vector<char>(kCopyChunk);
  std::size_t large_pipes_left = kLargePipes;
};

void make_pipe(Direction &d, RelayShared &shared) {
  int ends[2];
  if (::pipe2(ends, O_NONBLOCK | O_CLOEXEC) != 0) fail("cannot make a tunnel's pipe");
  d.pipe_out.reset(ends[0]);
  d.pipe_in.reset(ends[1]);
  if (shared.large_pipes_left > 0 && ::fcntl(ends[1], F_SETPIPE_SZ, kLargePipeBytes) >= 0) {
    d.large_pipe = true;
    --shared.large_pipes_left;
  }
}

void close_pipe(Direction &d, RelayShared &shared) {
  d.pipe_out.reset();
  d.pipe_in.reset();
  if (d.large_pipe) ++shared.large_pipes_left;
  d.large_pipe = false;
}

// Moves what can be moved without blocking. Throws std::system_error on a broken socket.
Moved move(Direction &d, RelayShared &shared, const char *side) {
  const std::span<char> buffer(shared.copy_buffer);
  Moved moved = Moved::nothing;
  for (;;) {
    if (!d.prefix.empty()) {
      while (!d.prefix.empty()) {
        const ssize_t n = ::send(d.to, d.prefix.data(), d.prefix.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return moved;
        if (n < 0) throw std::system_error(errno, std::generic_category(), side);
        d.prefix.erase(0, static_cast<std::size_t>(n));
        moved = Moved::some;
      }
      std::string().swap(d.prefix);  // an idle tunnel holds no buffer
    }
    while (d.in_pipe > 0) {
      const ssize_t n = ::splice(d.pipe_out.get(), nullptr, d.to, nullptr, d.in_pipe,
                                 SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return moved;
      if (n <= 0) throw std::system_error(n < 0 ? errno : EPIPE, std::generic_category(), side);
      d.in_pipe -= static_cast<std::size_t>(n);
      moved = Moved::some;
    }
    if (d.eof) {
      if (!d.shut_down) {
        ::shutdown(d.to, SHUT_WR);
        d.shut_down = true;
      }
      return moved;
    }
    if (!d.pipe_in) {
      // A request or a short reply is copied: a read and a write, where a pipe would add
      // its making, two splices and two descriptors. A read that fills the buffer means
      // bulk data, which from then on goes through a pipe.
      const ssize_t n = ::recv(d.from, buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return moved;
      if (n < 0) throw std::system_error(errno, std::generic_category(), side);
      if (n == 0) {
        d.eof = true;
        continue;
      }
      moved = Moved::some;
      std::size_t sent = 0;
      while (sent < static_cast<std::size_t>(n)) {
        const ssize_t w =
            ::send(d.to, buffer.data() + sent, static_cast<std::size_t>(n) - sent, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) break;
        if (w < 0) throw std::system_error(errno, std::generic_category(), side);
        sent += static_cast<std::size_t>(w);
      }
      d.prefix.assign(buffer.data() + sent, static_cast<std::size_t>(n) - sent);
      if (static_cast<std::size_t>(n) == buffer.size()) make_pipe(d, shared);
      continue;
    }
    // The pipe is empty here, so EAGAIN means the socket has nothing more for now.
    const ssize_t n = ::splice(d.from, nullptr, d.pipe_in.get(), nullptr, kSpliceChunk,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return moved;
    if (n < 0) throw std::system_error(errno, std::generic_category(), side);
    if (n == 0) {
      d.eof = true;
    } else {
      d.in_pipe = static_cast<std::size_t>(n);
      moved = Moved::some;
    }
  }
}

}  // namespace

struct TunnelRelay::Tunnel {
  UniqueFd client, upstream;
  Direction up, down;  // client -> upstream, upstream -> client
  std::string label;
  Clock::time_point last_moved = Clock::now();
  bool closed = false;
  std::list<std::unique_ptr<Tunnel>>::iterator self;
};

struct TunnelRelay::Queue {
  std::mutex mutex;
  std::vector<std::unique_ptr<Tunnel>> pending;
  std::list<std::unique_ptr<Tunnel>> tunnels;   // the relay thread's alone
  std::vector<std::unique_ptr<Tunnel>> closed;  // freed after the events that name them
  RelayShared shared;                           // the relay thread's
};

TunnelRelay::TunnelRelay(TunnelLimits limits, std::function<void(const std::string &)> say)
    : limits_(limits),
      say_(std::move(say)),
      epoll_(::epoll_create1(EPOLL_CLOEXEC)),
      wake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      queue_(std::make_unique<Queue>()) {
  if (!epoll_ || !wake_) fail("cannot make the tunnel relay's epoll set");
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.ptr = nullptr;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_.get(), &event) != 0) {
    fail("cannot watch the tunnel relay's eventfd");
  }
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

TunnelRelay::~TunnelRelay() {
  thread_.request_stop();
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(wake_.get(), &one, sizeof one);
  thread_.join();
}

void TunnelRelay::add(UniqueFd client, UniqueFd upstream, std::string to_upstream,
                      std::string label) {
  auto tunnel = std::make_unique<Tunnel>();
  tunnel->up.from = tunnel->down.to = client.get();
  tunnel->up.to = tunnel->down.from = upstream.get();
  tunnel->up.prefix = std::move(to_upstream);
  tunnel->client = std::move(client);
  tunnel->upstream = std::move(upstream);
  tunnel->label = std::move(label);
  ++active_;
  {
    std::lock_guard lock(queue_->mutex);
    queue_->pending.push_back(std::move(tunnel));
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(wake_.get(), &one, sizeof one);
}

void TunnelRelay::pump(Tunnel &tunnel) {
  try {
    const bool up = move(tunnel.up, queue_->shared, "the client's side") == Moved::some;
    const bool down = move(tunnel.down, queue_->shared, "the upstream's side") == Moved::some;
    if (up || down) tunnel.last_moved = Clock::now();
  } catch (const std::system_error &e) {
    // A peer that resets a finished tunnel is an ordinary end, not a failure to report.
    const bool ordinary = e.code().value() == ECONNRESET || e.code().value() == EPIPE;
    close_tunnel(&tunnel, ordinary ? std::string() : std::string(e.what()));
    return;
  }
  if (tunnel.up.done() && tunnel.down.done()) close_tunnel(&tunnel, {});
}

void TunnelRelay::close_tunnel(Tunnel *tunnel, const std::string &why) {
  if (tunnel->closed) return;
  tunnel->closed = true;
  if (!why.empty() && say_) say_("egress: tunnel " + tunnel->label + " ended: " + why);
  // Counted out before its sockets close, so a peer that sees the end sees the count.
  --active_;
  // Closing the sockets takes them out of the epoll set; the tunnel itself lives until
  // the events already fetched that point at it are handled.
  tunnel->client.reset();
  tunnel->upstream.reset();
  close_pipe(tunnel->up, queue_->shared);
  close_pipe(tunnel->down, queue_->shared);
  queue_->closed.push_back(std::move(*tunnel->self));
  queue_->tunnels.erase(tunnel->self);
}

void TunnelRelay::expire(Clock::time_point now) {
  for (auto it = queue_->tunnels.begin(); it != queue_->tunnels.end();) {
    Tunnel &tunnel = **it++;
    const bool half_open = tunnel.up.done() != tunnel.down.done();
    const auto limit = half_open ? limits_.half_open : limits_.idle;
    if (now - tunnel.last_moved >= limit) {
      close_tunnel(&tunnel, std::string(half_open ? "half-open" : "idle") + " for " +
                                std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                                   now - tunnel.last_moved)
                                                   .count()) +
                                " s");
    }
  }
}

void TunnelRelay::run(std::stop_token stop) {
  std::vector<epoll_event> events(256);
  auto next_expiry = Clock::now() + std::chrono::seconds(1);
  while (!stop.stop_requested()) {
    const int ready =
        ::epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), 1000);
    if (ready < 0 && errno != EINTR) fail("epoll_wait in the tunnel relay");
    for (int i = 0; i < ready; ++i) {
      if (events[i].data.ptr == nullptr) {
        std::uint64_t count;
        [[maybe_unused]] const auto read = ::read(wake_.get(), &count, sizeof count);
        continue;
      }
      auto *tunnel = static_cast<Tunnel *>(events[i].data.ptr);
      if (!tunnel->closed) pump(*tunnel);
    }
    std::vector<std::unique_ptr<Tunnel>> arrived;
    {
      std::lock_guard lock(queue_->mutex);
      arrived.swap(queue_->pending);
    }
    for (auto &added : arrived) {
      Tunnel *tunnel = added.get();
      queue_->tunnels.push_back(std::move(added));
      tunnel->self = std::prev(queue_->tunnels.end());
      epoll_event event{};
      event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
      event.data.ptr = tunnel;
      if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, tunnel->client.get(), &event) != 0 ||
          ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, tunnel->upstream.get(), &event) != 0) {
        close_tunnel(tunnel, std::string("cannot watch its sockets: ") + std::strerror(errno));
        continue;
      }
      pump(*tunnel);
    }
    queue_->closed.clear();
    const auto now = Clock::now();
    if (now >= next_expiry) {
      expire(now);
      queue_->closed.clear();
      next_expiry = now + std::chrono::seconds(1);
    }
  }
  while (!queue_->tunnels.empty()) close_tunnel(queue_->tunnels.front().get(), {});
  queue_->closed.clear();
  std::lock_guard lock(queue_->mutex);
  active_ -= queue_->pending.size();
  queue_->pending.clear();
}

}  // namespace sandbox_host::egress
