// The egress proxy's listeners (a loopback TCP port, a unix socket) and its lifetime, and
// EgressProxy over its Impl.
#include <sandbox_host/egress/proxy/proxy_server.hpp>
#include <sandbox_host/host/metrics/recorder.hpp>

#include "proxy_impl.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace sandbox_host::egress {
namespace {

// bound_address: the address every accepted socket has as its own (one address is bound).
UniqueFd listen_tcp(const LoopbackEndpoint &listen, std::uint16_t &bound_port, IpAddress &bound,
                    sockaddr_storage &bound_address) {
  if (special_range(listen.address).value_or("").rfind("loopback", 0) != 0) {
    throw std::invalid_argument("egress listen " + listen.to_string() +
                                " is not a loopback address; the proxy serves this host alone");
  }
  socklen_t length = 0;
  sockaddr_storage address = listen.address.to_sockaddr(listen.port, length);
  UniqueFd fd(::socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) fail("cannot make the egress proxy's socket");
  const int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // Accepted sockets inherit it, so no connection needs a call of its own.
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&address), length) != 0) {
    fail("cannot listen on " + listen.to_string());
  }
  // Every client of the proxy speaks first (an HTTP head, a SOCKS5 greeting), so a
  // connection is accepted when its first bytes are there: one wake-up fewer per request.
  const int defer_seconds = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_seconds, sizeof defer_seconds);
  if (::listen(fd.get(), SOMAXCONN) != 0) fail("cannot listen on " + listen.to_string());
  socklen_t bound_length = sizeof address;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr *>(&address), &bound_length);
  bound = IpAddress::from_sockaddr(reinterpret_cast<sockaddr *>(&address));
  bound_address = address;
  bound_port =
      ntohs(address.ss_family == AF_INET ? reinterpret_cast<sockaddr_in &>(address).sin_port
                                         : reinterpret_cast<sockaddr_in6 &>(address).sin6_port);
  return fd;
}

UniqueFd listen_unix(const std::filesystem::path &path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.native().size() >= sizeof address.sun_path) {
    throw std::invalid_argument("egress socket path " + path.string() +
                                " is too long for a unix socket");
  }
  std::strcpy(address.sun_path, path.c_str());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) fail("cannot make the egress proxy's unix socket");
  struct stat existing {};
  // A socket left by a proxy that died goes; anything else at the path is the operator's.
  if (::lstat(path.c_str(), &existing) == 0) {
    if (!S_ISSOCK(existing.st_mode)) {
      throw std::invalid_argument("egress socket path " + path.string() +
                                  " exists and is not a socket");
    }
    ::unlink(path.c_str());
  }
  if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
    fail("cannot bind the egress socket " + path.string());
  }
  // Who may connect is decided by SO_PEERCRED; the file mode only keeps others from
  // trying.
  ::chmod(path.c_str(), 0600);
  if (::listen(fd.get(), SOMAXCONN) != 0) fail("cannot listen on " + path.string());
  return fd;
}

}  // namespace

EgressProxy::Impl::Impl(EgressOptions given)
    : options(std::move(given)),
      relay(TunnelLimits{options.idle_timeout,
                         std::min(options.idle_timeout,
                                  std::chrono::milliseconds(std::chrono::minutes(1)))},
            options.say),
      epoll(::epoll_create1(EPOLL_CLOEXEC)),
      wake(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      pool(WorkerLimits::one_queue(options.max_sessions, std::chrono::seconds(30))) {
  if (!epoll || !wake) fail("cannot make the egress proxy's epoll set");
  for (auto &host : options.inject) host = normalize_host_name(host);
  if (!options.inject.empty()) {
    if (!options.ca) throw std::invalid_argument("egress inject hosts need the proxy's CA");
    interceptor = std::make_unique<TlsInterceptor>(options.ca, options.upstream_ca_bundle);
  }
  if (!options.listen && options.socket.empty()) {
    throw std::invalid_argument("the egress proxy has neither a listen address nor a socket");
  }
  if (options.listen) {
    tcp_listener = listen_tcp(*options.listen, port, own_address, tcp_local);
    options.addresses.add_own(own_address);
  }
  if (!options.socket.empty()) unix_listener = listen_unix(options.socket);
  unix_local.ss_family = AF_UNIX;
  auto watch = [&](int fd) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, fd, &event) != 0) fail("cannot watch a listener");
  };
  watch(wake.get());
  if (tcp_listener) watch(tcp_listener.get());
  if (unix_listener) watch(unix_listener.get());
  acceptor = std::jthread([this](std::stop_token stop) { accept_loop(stop); });
}

EgressProxy::Impl::~Impl() {
  acceptor.request_stop();
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(wake.get(), &one, sizeof one);
  acceptor.join();
  sessions.stop();
  if (!options.socket.empty()) ::unlink(options.socket.c_str());
}

void EgressProxy::Impl::log(const Peer &peer, const std::string &target, std::string_view how,
                            std::string_view what) {
  if (!options.log) return;
  options.log(peer.describe() + " -> " + target + ": " + std::string(how) + std::string(what));
}

void EgressProxy::Impl::say(const Peer &peer, const std::string &target, std::string_view rule,
                            const std::string &line) {
  ++refused;
  metrics::recorder()->egress_refusal(rule);
  if (options.say) options.say("egress: " + peer.describe() + " -> " + target + ": " + line);
}

EgressProxy::EgressProxy(EgressOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
EgressProxy::~EgressProxy() = default;

std::uint16_t EgressProxy::port() const {
  return impl_->port;
}
const std::filesystem::path &EgressProxy::socket() const {
  return impl_->options.socket;
}

EgressProxy::Counts EgressProxy::counts() const {
  Counts counts;
  counts.tunnels = impl_->relay.active();
  counts.refused = impl_->refused.load();
  counts.sessions = impl_->sessions.count();
  return counts;
}

}  // namespace sandbox_host::egress
