// The acceptor: takes connections, reads each one's HTTP head or SOCKS5 handshake on its
// one thread, and hands the complete ones to sessions of their own.
#include <sandbox_host/egress/proxy/http_exchange.hpp>
#include <sandbox_host/egress/proxy/sigpipe_blocked.hpp>

#include "proxy_impl.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace sandbox_host::egress {

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

}  // namespace sandbox_host::egress
