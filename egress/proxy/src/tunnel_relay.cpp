#include <sandbox_host/egress/proxy/sigpipe_blocked.hpp>
#include <sandbox_host/egress/proxy/tunnel_relay.hpp>
#include <sandbox_host/host/metrics/recorder.hpp>
#include <sandbox_host/relay_direction.hpp>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <system_error>
#include <vector>

namespace sandbox_host::egress {
namespace {

using Clock = std::chrono::steady_clock;
// At most 16 pipes grown at once (4,096 pages of the user's 16,384); the others keep the
// default size.
constexpr std::size_t kLargePipes = 16;
constexpr std::uint32_t kReadEvents = EPOLLIN | EPOLLRDHUP | EPOLLET;

[[noreturn]] void fail(const char *what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

// Which of a tunnel's sockets an epoll event is for.
struct TunnelRelay::Side {
  Tunnel *tunnel;
  bool client;
};

struct TunnelRelay::Tunnel {
  Tunnel(UniqueFd client_fd, UniqueFd upstream_fd, std::string to_upstream)
      : client(std::move(client_fd)),
        upstream(std::move(upstream_fd)),
        up(client.get(), upstream.get(), std::move(to_upstream)),
        down(upstream.get(), client.get()),
        upstream_writes_watched(up.wants_write()) {}

  UniqueFd client, upstream;
  RelayDirection up, down;  // client -> upstream, upstream -> client
  Side client_side{this, true}, upstream_side{this, false};
  // EPOLLOUT is asked for a socket only once a direction has had to wait to write to it,
  // so a tunnel of small exchanges is never woken by its sockets' free space.
  bool client_writes_watched = false;
  bool upstream_writes_watched;
  std::string label;
  std::string unwatched;  // why epoll refused a socket: the relay thread ends the tunnel
  Clock::time_point last_moved = Clock::now();
  bool closed = false;
  std::list<std::unique_ptr<Tunnel>>::iterator self;
};

struct TunnelRelay::Queue {
  // Held by add() while it watches a tunnel's sockets, and by the relay thread when it
  // takes the added tunnels, before it handles the events of the same wake-up: so an
  // event never names a tunnel the relay thread does not hold yet.
  std::mutex mutex;
  std::vector<std::unique_ptr<Tunnel>> pending;
  std::list<std::unique_ptr<Tunnel>> tunnels;   // the relay thread's alone
  std::vector<std::unique_ptr<Tunnel>> closed;  // freed after the events that name them
  RelayScratch scratch{kLargePipes};            // the relay thread's
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

// The caller watches the sockets itself: the relay thread wakes when a socket has
// something for it (the client's first request, usually), not once more to be told of
// the tunnel. Data already waiting is reported by EPOLL_CTL_ADD.
void TunnelRelay::add(UniqueFd client, UniqueFd upstream, std::string to_upstream,
                      std::string label) {
  auto tunnel =
      std::make_unique<Tunnel>(std::move(client), std::move(upstream), std::move(to_upstream));
  tunnel->label = std::move(label);
  Tunnel &added = *tunnel;
  ++active_;
  metrics::recorder()->egress_tunnels_open(1);
  std::lock_guard lock(queue_->mutex);
  auto watch = [&](int fd, Side &side, bool writes) {
    epoll_event event{};
    event.events = kReadEvents | (writes ? EPOLLOUT : 0u);
    event.data.ptr = &side;
    return ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event) == 0;
  };
  if (!watch(added.client.get(), added.client_side, false) ||
      !watch(added.upstream.get(), added.upstream_side, added.upstream_writes_watched)) {
    added.unwatched = std::string("cannot watch its sockets: ") + std::strerror(errno);
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto written = ::write(wake_.get(), &one, sizeof one);
  }
  queue_->pending.push_back(std::move(tunnel));
}

void TunnelRelay::pump(Tunnel &tunnel, bool client_side, std::uint32_t events) {
  const bool hung_up = (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
  const bool readable = hung_up || (events & EPOLLIN) != 0;
  const bool writable = (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) != 0;
  RelayDirection &reads_here = client_side ? tunnel.up : tunnel.down;
  RelayDirection &writes_here = client_side ? tunnel.down : tunnel.up;
  auto side_of = [&](const RelayDirection &direction) {
    return &direction == &tunnel.up ? "the client's side" : "the upstream's side";
  };
  try {
    // Edge-triggered: a direction moves until its sockets would block, or until a short
    // read shows its source drained.
    bool moved = false;
    if (readable) moved |= reads_here.move(queue_->scratch, side_of(reads_here), 0, !hung_up);
    if (writable && writes_here.wants_write()) {
      moved |= writes_here.move(queue_->scratch, side_of(writes_here));
    }
    if (moved) tunnel.last_moved = Clock::now();
    watch_writes(tunnel);
  } catch (const std::system_error &e) {
    // A peer that resets a finished tunnel is an ordinary end, not a failure to report.
    const bool ordinary = e.code().value() == ECONNRESET || e.code().value() == EPIPE;
    close_tunnel(&tunnel, ordinary ? std::string() : std::string(e.what()));
    return;
  }
  if (tunnel.up.done() && tunnel.down.done()) close_tunnel(&tunnel, {});
}

void TunnelRelay::watch_writes(Tunnel &tunnel) {
  auto watch = [&](int fd, Side &side, bool &watched, const RelayDirection &direction) {
    if (watched || !direction.wants_write()) return;
    epoll_event event{};
    event.events = kReadEvents | EPOLLOUT;
    event.data.ptr = &side;
    // The modification reports the socket at once if it has room again already.
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &event) != 0) {
      throw std::system_error(errno, std::generic_category(), "cannot watch a socket's writes");
    }
    watched = true;
  };
  watch(tunnel.client.get(), tunnel.client_side, tunnel.client_writes_watched, tunnel.down);
  watch(tunnel.upstream.get(), tunnel.upstream_side, tunnel.upstream_writes_watched, tunnel.up);
}

void TunnelRelay::close_tunnel(Tunnel *tunnel, const std::string &why) {
  if (tunnel->closed) return;
  tunnel->closed = true;
  if (!why.empty() && say_) say_("egress: tunnel " + tunnel->label + " ended: " + why);
  // Counted out before its sockets close, so a peer that sees the end sees the count.
  --active_;
  metrics::recorder()->egress_tunnels_open(-1);
  metrics::recorder()->egress_bytes(tunnel->up.received(), tunnel->down.received());
  // Closing the sockets takes them out of the epoll set; the tunnel itself lives until
  // the events already fetched that point at it are handled.
  tunnel->client.reset();
  tunnel->upstream.reset();
  tunnel->up.release(queue_->scratch);
  tunnel->down.release(queue_->scratch);
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
  block_sigpipe_in_this_thread();
  std::vector<epoll_event> events(256);
  auto take_added = [&] {
    std::vector<std::unique_ptr<Tunnel>> arrived;
    {
      std::lock_guard lock(queue_->mutex);
      arrived.swap(queue_->pending);
    }
    for (auto &added : arrived) {
      Tunnel *tunnel = added.get();
      queue_->tunnels.push_back(std::move(added));
      tunnel->self = std::prev(queue_->tunnels.end());
      if (!tunnel->unwatched.empty()) close_tunnel(tunnel, tunnel->unwatched);
    }
  };
  auto next_expiry = Clock::now() + std::chrono::seconds(1);
  while (!stop.stop_requested()) {
    const int ready =
        ::epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), 1000);
    if (ready < 0 && errno != EINTR) fail("epoll_wait in the tunnel relay");
    take_added();
    for (int i = 0; i < ready; ++i) {
      if (events[i].data.ptr == nullptr) {
        std::uint64_t count;
        [[maybe_unused]] const auto read = ::read(wake_.get(), &count, sizeof count);
        continue;
      }
      const auto *side = static_cast<const Side *>(events[i].data.ptr);
      if (!side->tunnel->closed) pump(*side->tunnel, side->client, events[i].events);
    }
    queue_->closed.clear();
    const auto now = Clock::now();
    if (now >= next_expiry) {
      expire(now);
      queue_->closed.clear();
      next_expiry = now + std::chrono::seconds(1);
    }
  }
  take_added();
  while (!queue_->tunnels.empty()) close_tunnel(queue_->tunnels.front().get(), {});
  queue_->closed.clear();
}

}  // namespace sandbox_host::egress
