#include <sandbox_host/egress/destination/tcp_connect.hpp>
#include <sandbox_host/egress/proxy/counted_stream.hpp>
#include <sandbox_host/egress/proxy/http_exchange.hpp>
#include <sandbox_host/egress/proxy/parent_proxy.hpp>
#include <sandbox_host/egress/proxy/peer_identity.hpp>
#include <sandbox_host/egress/proxy/proxy_server.hpp>
#include <sandbox_host/egress/proxy/sigpipe_blocked.hpp>
#include <sandbox_host/egress/proxy/socks5.hpp>
#include <sandbox_host/egress/proxy/tls_interception.hpp>
#include <sandbox_host/egress/proxy/tunnel_relay.hpp>
#include <sandbox_host/host/metrics/recorder.hpp>
#include <sandbox_host/host/worker_pool.hpp>

#include "session_sockets.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <string_view>
#include <system_error>
#include <thread>

namespace sandbox_host::egress {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string &what) {
  throw std::system_error(errno, std::generic_category(), what);
}

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

// host:port as people write it, an IPv6 address in brackets.
std::string endpoint(const std::string &host, std::uint16_t port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// What the acceptor learned of a connection before it became a session.
struct Handshake {
  enum class Stage { first_byte, http, socks_greeting, socks_request };
  UniqueFd fd;
  // Once its session starts; after fd, so it leaves the stop's set before fd closes.
  std::unique_ptr<SessionSockets::Shutdown> shutdown_on_stop;
  Peer peer;
  std::string buffer;
  Clock::time_point deadline;
  Stage stage = Stage::first_byte;
  RequestParse http;
  Socks5Request socks;
};

// Where a session's upstream connection went, or why it did not.
struct Upstream {
  UniqueFd fd;
  int status = 0;  // the HTTP status of the refusal
  Socks5Reply reply = Socks5Reply::succeeded;
  std::string refusal;
  // The rule that refused, for the metrics: "allow-list", "destination" (the addresses it
  // resolves to), "parent-proxy" (the operator's proxy answered no), or "upstream" (none
  // could be reached).
  std::string_view rule = "upstream";
};

bool send_now(int fd, std::string_view bytes) {
  return ::send(fd, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL) ==
         static_cast<ssize_t>(bytes.size());
}

}  // namespace

struct EgressProxy::Impl {
  explicit Impl(EgressOptions options);
  ~Impl();

  void accept_loop(std::stop_token stop);
  void accept_from(int listener);
  enum class Next { wait, close, serve };
  Next read_handshake(Handshake &handshake);
  void start_session(std::unique_ptr<Handshake> handshake);
  // A 503 (HTTP) or a general failure (SOCKS5) when the proxy cannot take the connection.
  void refuse_busy(const Handshake &handshake, const std::string &why);
  void session(Handshake &handshake);
  void http_session(Handshake &handshake);
  void socks_session(Handshake &handshake);
  Upstream open_upstream(const std::string &host, std::uint16_t port);
  // `entry` names how the client asked ("CONNECT", "SOCKS5"), for the log.
  void established(Handshake &handshake, UniqueFd upstream, std::string to_upstream,
                   const std::string &host, std::uint16_t port, const char *entry);
  void forward(Handshake &handshake, HttpRequestHead head, std::string rest);
  bool inject_host(const std::string &host) const;
  // A refused or failed connection: its line to options.say, counted by rule (a fixed word).
  void say(const Peer &peer, const std::string &target, std::string_view rule,
           const std::string &line);
  // The allowed connection's line, "<peer> -> <target>: <how><what>"; built only when
  // options.log is set, since this is every connection's path.
  void log(const Peer &peer, const std::string &target, std::string_view how,
           std::string_view what);

  EgressOptions options;
  UniqueFd tcp_listener, unix_listener;
  sockaddr_storage tcp_local{}, unix_local{};  // an accepted socket's own address, by listener
  std::uint16_t port = 0;
  IpAddress own_address;
  TunnelRelay relay;
  std::unique_ptr<TlsInterceptor> interceptor;
  UniqueFd epoll, wake;
  std::map<int, std::unique_ptr<Handshake>> handshakes;  // by fd; the acceptor thread's alone
  PeerIdentifier peers;                                  // the acceptor thread's alone
  std::atomic<std::size_t> refused{0};

  SessionSockets sessions;

  std::jthread acceptor;
  // Last, so it goes first: its threads end once the destructor's wait saw no session.
  WorkerPool pool;
};

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

void EgressProxy::Impl::accept_loop(std::stop_token stop) {
  // The session threads the pool starts from here inherit it.
  block_sigpipe_in_this_thread();
  std::vector<epoll_event> events(64);
  auto drop = [&](std::map<int, std::unique_ptr<Handshake>>::iterator it) {
    ::epoll_ctl(epoll.get(), EPOLL_CTL_DEL, it->first, nullptr);
    return handshakes.erase(it);
  };
  while (!stop.stop_requested()) {
    auto next_deadline = Clock::now() + std::chrono::seconds(1);
    for (const auto &[fd, handshake] : handshakes) {
      next_deadline = std::min(next_deadline, handshake->deadline);
    }
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - Clock::now());
    const int ready = ::epoll_wait(epoll.get(), events.data(), static_cast<int>(events.size()),
                                   static_cast<int>(std::max<std::int64_t>(wait.count(), 0) + 1));
    if (ready < 0 && errno != EINTR) fail("epoll_wait in the egress proxy");
    for (int i = 0; i < ready; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake.get()) {
        std::uint64_t count;
        [[maybe_unused]] const auto read = ::read(wake.get(), &count, sizeof count);
      } else if (fd == tcp_listener.get() || fd == unix_listener.get()) {
        accept_from(fd);
      } else if (auto it = handshakes.find(fd); it != handshakes.end()) {
        const Next next = read_handshake(*it->second);
        if (next == Next::wait) continue;
        std::unique_ptr<Handshake> handshake = std::move(it->second);
        drop(it);
        // Complete: the connection leaves the acceptor for a session of its own.
        if (next == Next::serve) start_session(std::move(handshake));
      }
    }
    const auto now = Clock::now();
    for (auto it = handshakes.begin(); it != handshakes.end();) {
      Handshake &handshake = *it->second;
      if (now < handshake.deadline) {
        ++it;
        continue;
      }
      say(handshake.peer, "?", "head-timeout",
          "sent no complete request within " +
              std::to_string(
                  std::chrono::duration_cast<std::chrono::seconds>(options.head_timeout).count()) +
              " s");
      if (handshake.stage == Handshake::Stage::http) {
        send_now(handshake.fd.get(),
                 proxy_response(408, "sandbox-host egress: no complete request in time"));
      }
      it = drop(it);
    }
  }
}

void EgressProxy::Impl::accept_from(int listener) {
  const sockaddr_storage &local = listener == tcp_listener.get() ? tcp_local : unix_local;
  for (;;) {
    sockaddr_storage remote{};
    socklen_t remote_length = sizeof remote;
    UniqueFd fd(::accept4(listener, reinterpret_cast<sockaddr *>(&remote), &remote_length,
                          SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) return;
      // Out of descriptors: the connections wait in the backlog until some close.
      if (options.say) options.say(std::string("egress: cannot accept: ") + std::strerror(errno));
      return;
    }
    auto handshake = std::make_unique<Handshake>();
    handshake->peer = peers.identify(fd.get(), local, remote);
    if (options.same_user) {
      const std::string refusal = same_user_refusal(handshake->peer, *options.same_user);
      if (!refusal.empty()) {
        say(handshake->peer, "the proxy", "same-user", "refused: " + refusal);
        continue;
      }
    }
    if (listener == unix_listener.get()) {
      const std::string refusal = unproxied_sandbox_refusal(fd.get(), handshake->peer);
      if (!refusal.empty()) {
        say(handshake->peer, "the proxy", "sandboxed-peer", "refused: " + refusal);
        continue;
      }
    }
    handshake->fd = std::move(fd);
    handshake->deadline = Clock::now() + options.head_timeout;
    // The head is usually there already (TCP_DEFER_ACCEPT): read it before any wait.
    const Next next = read_handshake(*handshake);
    if (next == Next::serve) {
      start_session(std::move(handshake));
    } else if (next == Next::wait) {
      epoll_event event{};
      event.events = EPOLLIN | EPOLLRDHUP;
      event.data.fd = handshake->fd.get();
      if (::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, handshake->fd.get(), &event) != 0) continue;
      const int key = handshake->fd.get();
      handshakes.emplace(key, std::move(handshake));
    }
  }
}

EgressProxy::Impl::Next EgressProxy::Impl::read_handshake(Handshake &handshake) {
  const HttpLimits limits;
  char chunk[8192];
  for (;;) {
    const ssize_t n = ::recv(handshake.fd.get(), chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return Next::wait;
    if (n <= 0) return Next::close;  // the client left before its request was complete
    handshake.buffer.append(chunk, static_cast<std::size_t>(n));
    if (handshake.stage == Handshake::Stage::first_byte) {
      handshake.stage =
          handshake.buffer[0] == 0x05 ? Handshake::Stage::socks_greeting : Handshake::Stage::http;
    }
    if (handshake.stage == Handshake::Stage::http) {
      // The parser starts from the beginning each time: a client that sends its head a byte
      // at a time would cost a parse per byte. The result only changes at a line's end or
      // at the size limit, so that is when it is asked.
      const bool line_ended = std::memchr(chunk, '\n', static_cast<std::size_t>(n)) != nullptr;
      if (!line_ended && handshake.buffer.size() <= limits.max_head_bytes) continue;
      handshake.http = parse_request_head(handshake.buffer, limits);
      if (handshake.http.state == ParseState::incomplete) continue;
      if (handshake.http.state == ParseState::error) {
        say(handshake.peer, "?", "bad-request", "bad request: " + handshake.http.error.reason);
        send_now(handshake.fd.get(),
                 proxy_response(handshake.http.error.status,
                                "sandbox-host egress: " + handshake.http.error.reason));
        return Next::close;
      }
      break;
    }
    if (handshake.stage == Handshake::Stage::socks_greeting) {
      const GreetingParse greeting = parse_socks5_greeting(handshake.buffer);
      if (greeting.state == ParseState::incomplete) continue;
      if (greeting.state == ParseState::error || !greeting.greeting.no_auth_offered) {
        say(handshake.peer, "?", "socks5",
            "SOCKS5 refused: " +
                (greeting.state == ParseState::error
                     ? greeting.error
                     : std::string("the client offers no method without authentication")));
        send_now(handshake.fd.get(), socks5_method_selection(false));
        return Next::close;
      }
      send_now(handshake.fd.get(), socks5_method_selection(true));
      handshake.buffer.erase(0, greeting.consumed);
      handshake.stage = Handshake::Stage::socks_request;
    }
    if (handshake.stage == Handshake::Stage::socks_request) {
      const RequestParse5 request = parse_socks5_request(handshake.buffer);
      if (request.state == ParseState::incomplete) continue;
      if (request.state == ParseState::error) {
        say(handshake.peer, "?", "socks5", "SOCKS5 refused: " + request.error);
        send_now(handshake.fd.get(), socks5_reply(request.reply));
        return Next::close;
      }
      handshake.buffer.erase(0, request.consumed);
      handshake.socks = request.request;
      break;
    }
  }
  return Next::serve;
}

void EgressProxy::Impl::refuse_busy(const Handshake &handshake, const std::string &why) {
  say(handshake.peer, "?", "busy", "refused: " + why);
  send_now(handshake.fd.get(), handshake.stage == Handshake::Stage::http
                                   ? proxy_response(503, "sandbox-host egress: " + why)
                                   : socks5_reply(Socks5Reply::general_failure));
}

void EgressProxy::Impl::start_session(std::unique_ptr<Handshake> handshake) {
  auto ticket = sessions.admit(options.max_sessions);
  if (!ticket) {
    refuse_busy(*handshake, std::to_string(sessions.count()) + " connections already");
    return;
  }
  handshake->shutdown_on_stop =
      std::make_unique<SessionSockets::Shutdown>(sessions, handshake->fd.get());
  // The handshake after the ticket, so it goes first: the connection is closed before the
  // count says it is gone.
  struct Running {
    std::unique_ptr<SessionSockets::Ticket> ticket;
    std::unique_ptr<Handshake> handshake;
  };
  auto running = std::make_shared<Running>(Running{std::move(ticket), std::move(handshake)});
  const bool started = pool.submit({}, [this, running] {
    try {
      session(*running->handshake);
    } catch (const std::exception &e) {
      if (options.say) {
        options.say("egress: " + running->handshake->peer.describe() + ": " + e.what());
      }
    }
    running->handshake.reset();
    running->ticket.reset();
  }) == Admission::taken;
  if (!started) refuse_busy(*running->handshake, "no thread for the connection");
}

void EgressProxy::Impl::session(Handshake &handshake) {
  if (handshake.stage == Handshake::Stage::http) {
    http_session(handshake);
  } else {
    socks_session(handshake);
  }
}

bool EgressProxy::Impl::inject_host(const std::string &host) const {
  // The target passed the allow list, so it is a host name or an IP literal.
  const std::string name = normalize_host_name(host);
  return std::find(options.inject.begin(), options.inject.end(), name) != options.inject.end();
}

Upstream EgressProxy::Impl::open_upstream(const std::string &host, std::uint16_t port) {
  Upstream upstream;
  const AllowDecision decision = options.allow.decide(host, port);
  if (!decision.allowed) {
    upstream.status = 403;
    upstream.reply = Socks5Reply::not_allowed;
    upstream.refusal = "not allowed: " + decision.rule;
    upstream.rule = "allow-list";
    return upstream;
  }
  const Resolution resolution = resolve_checked(host, options.addresses, options.resolve);
  if (!resolution.refusal.empty()) {
    upstream.status = 403;
    upstream.reply = Socks5Reply::not_allowed;
    upstream.refusal = resolution.refusal;
    upstream.rule = "destination";
    return upstream;
  }
  std::string failures;
  for (const IpAddress &address : resolution.addresses) {
    if (tcp_listener && address == own_address && port == this->port) {
      failures += (failures.empty() ? "" : "; ") + address.to_string() + " is the proxy itself";
      continue;
    }
    if (options.parent) {
      ParentTunnel tunnel = tunnel_through(*options.parent, address, port, options.connect_timeout);
      if (tunnel.fd) {
        upstream.fd = std::move(tunnel.fd);
        return upstream;
      }
      upstream.status = tunnel.status;
      upstream.reply = tunnel.status == 403   ? Socks5Reply::not_allowed
                       : tunnel.status == 504 ? Socks5Reply::ttl_expired
                                              : Socks5Reply::host_unreachable;
      if (tunnel.answered) {
        upstream.refusal = tunnel.refusal;
        upstream.rule = "parent-proxy";
        return upstream;
      }
      failures += (failures.empty() ? "" : "; ") + tunnel.refusal;
      continue;
    }
    Connected connected = connect_within(address, port, options.connect_timeout);
    if (connected.fd) {
      upstream.fd = std::move(connected.fd);
      return upstream;
    }
    const int error = connected.error;
    failures += (failures.empty() ? "" : "; ") + address.to_string() + ": " + std::strerror(error);
    upstream.status = error == ETIMEDOUT ? 504 : 502;
    upstream.reply = error == ECONNREFUSED ? Socks5Reply::connection_refused
                     : error == ETIMEDOUT  ? Socks5Reply::ttl_expired
                                           : Socks5Reply::host_unreachable;
  }
  if (upstream.status == 0) {
    upstream.status = 502;
    upstream.reply = Socks5Reply::host_unreachable;
  }
  upstream.refusal = "cannot connect (" + failures + ")";
  return upstream;
}

void EgressProxy::Impl::http_session(Handshake &handshake) {
  HttpRequestHead head = std::move(handshake.http.head);
  std::string rest = handshake.buffer.substr(handshake.http.consumed);
  const std::string target = endpoint(head.host, head.port);
  const std::string_view kind = head.method == "CONNECT" ? "connect" : "http";
  auto refuse = [&](int status, std::string_view rule, const std::string &why) {
    metrics::recorder()->egress_connection(kind, "refused");
    say(handshake.peer, head.host.empty() ? head.target : target, rule,
        "refused " + std::to_string(status) + ": " + why);
    send_now(handshake.fd.get(),
             proxy_response(status, "sandbox-host egress: " +
                                        (head.host.empty() ? head.target : target) + ": " + why));
  };
  if (head.method == "CONNECT") {
    if (head.form != HttpRequestHead::Form::authority) {
      refuse(400, "bad-request", "CONNECT takes host:port");
      return;
    }
    if (relay.active() >= options.max_tunnels) {
      refuse(503, "max-tunnels",
             std::to_string(relay.active()) + " tunnels open, the proxy's max_tunnels");
      return;
    }
    Upstream upstream = open_upstream(head.host, head.port);
    if (!upstream.fd) {
      refuse(upstream.status, upstream.rule, upstream.refusal);
      return;
    }
    SocketStream(handshake.fd.get(), options.idle_timeout, "the client")
        .write_all("HTTP/1.1 200 Connection established\r\n\r\n");
    established(handshake, std::move(upstream.fd), std::move(rest), head.host, head.port,
                "CONNECT");
    return;
  }
  if (head.form != HttpRequestHead::Form::absolute) {
    refuse(
        400, "bad-request",
        "this is a proxy: send absolute-form requests (GET http://host/path) or CONNECT host:port");
    return;
  }
  if (head.scheme != "http") {
    refuse(400, "bad-request",
           "the scheme " + head.scheme + " goes through CONNECT, not as a forwarded request");
    return;
  }
  if (head.upgrade) {
    refuse(501, "upgrade", "Upgrade (WebSocket, h2c) is not forwarded; use CONNECT");
    return;
  }
  forward(handshake, std::move(head), std::move(rest));
}

void EgressProxy::Impl::forward(Handshake &handshake, HttpRequestHead head, std::string rest) {
  const std::string target = endpoint(head.host, head.port);
  Upstream upstream = open_upstream(head.host, head.port);
  SocketStream client(handshake.fd.get(), options.idle_timeout, "the client");
  if (!upstream.fd) {
    metrics::recorder()->egress_connection("http", "refused");
    say(handshake.peer, target, upstream.rule,
        "refused " + std::to_string(upstream.status) + ": " + upstream.refusal);
    client.write_all(proxy_response(upstream.status,
                                    "sandbox-host egress: " + target + ": " + upstream.refusal));
    return;
  }
  const SessionSockets::Shutdown upstream_on_stop(sessions, upstream.fd.get());
  metrics::recorder()->egress_connection("http", "allowed");
  log(handshake.peer, target, "forwarded ", head.method);
  SocketStream server(upstream.fd.get(), options.idle_timeout, "the upstream");
  // The Host is the target's, whatever the client wrote (RFC 9112 3.2.2).
  erase_headers(head.headers, "Host");
  const bool default_port = head.port == 80;
  const bool ipv6 = head.host.find(':') != std::string::npos;
  const std::string authority = (ipv6 ? "[" + head.host + "]" : head.host) +
                                (default_port ? "" : ":" + std::to_string(head.port));
  head.headers.insert(head.headers.begin(), {"Host", authority});
  head.form = HttpRequestHead::Form::origin;
  std::string upstream_buffer;
  CountedStream counted_client(client), counted_server(server);
  const ReportedBytes report(counted_client, counted_server);
  Exchange exchange(counted_client, rest, counted_server, upstream_buffer);
  try {
    // One request per connection: what follows on it would need the allow list again.
    exchange.run(std::move(head), true);
  } catch (const HttpParseError &e) {
    say(handshake.peer, target, "exchange", e.error().reason);
    if (!exchange.response_started()) {
      client.write_all(
          proxy_response(e.error().status, "sandbox-host egress: " + e.error().reason));
    }
  } catch (const StreamError &e) {
    say(handshake.peer, target, "exchange", e.what());
    if (!exchange.response_started()) {
      client.write_all(proxy_response(502, std::string("sandbox-host egress: ") + e.what()));
    }
  }
}

void EgressProxy::Impl::socks_session(Handshake &handshake) {
  const Socks5Request &request = handshake.socks;
  const std::string target = endpoint(request.host, request.port);
  if (relay.active() >= options.max_tunnels) {
    metrics::recorder()->egress_connection("socks5", "refused");
    say(handshake.peer, target, "max-tunnels", "refused: the proxy's max_tunnels are open");
    send_now(handshake.fd.get(), socks5_reply(Socks5Reply::general_failure));
    return;
  }
  Upstream upstream = open_upstream(request.host, request.port);
  if (!upstream.fd) {
    metrics::recorder()->egress_connection("socks5", "refused");
    say(handshake.peer, target, upstream.rule, "refused: " + upstream.refusal);
    send_now(handshake.fd.get(), socks5_reply(upstream.reply));
    return;
  }
  SocketStream(handshake.fd.get(), options.idle_timeout, "the client")
      .write_all(socks5_reply(Socks5Reply::succeeded));
  established(handshake, std::move(upstream.fd), std::move(handshake.buffer), request.host,
              request.port, "SOCKS5");
}

void EgressProxy::Impl::established(Handshake &handshake, UniqueFd upstream,
                                    std::string to_upstream, const std::string &host,
                                    std::uint16_t port, const char *entry) {
  const std::string target = endpoint(host, port);
  if (port == 443 && interceptor && inject_host(host)) {
    if (!to_upstream.empty()) {
      metrics::recorder()->egress_connection("tls", "refused");
      say(handshake.peer, target, "tls-early-data",
          "refused: TLS data sent before the proxy's answer to CONNECT");
      return;
    }
    metrics::recorder()->egress_connection("tls", "allowed");
    log(handshake.peer, target, entry, ", TLS terminated (an inject host)");
    const SessionSockets::Shutdown upstream_on_stop(sessions, upstream.get());
    InterceptedSession session{handshake.fd.get(), upstream.get(), normalize_host_name(host), port,
                               handshake.peer.describe()};
    interceptor->serve(session, options.allow, options.token, options.idle_timeout, options.say);
    return;
  }
  // The relay owns the connection from here, and ends its tunnels itself on a stop.
  handshake.shutdown_on_stop.reset();
  metrics::recorder()->egress_connection(std::string_view(entry) == "SOCKS5" ? "socks5" : "connect",
                                         "allowed");
  log(handshake.peer, target, entry, " tunnel");
  relay.add(std::move(handshake.fd), std::move(upstream), std::move(to_upstream),
            handshake.peer.describe() + " -> " + target);
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
