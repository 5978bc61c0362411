// The egress proxy's inside, shared by the files that hold its parts: the listeners and
// lifetime (proxy_server.cpp), the acceptor that reads each connection's handshake
// (proxy_acceptor.cpp), and the sessions that serve it upstream (proxy_sessions.cpp).
#pragma once

#include <sandbox_host/egress/proxy/http_message.hpp>
#include <sandbox_host/egress/proxy/peer_identity.hpp>
#include <sandbox_host/egress/proxy/proxy_server.hpp>
#include <sandbox_host/egress/proxy/socks5.hpp>
#include <sandbox_host/egress/proxy/tls_interception.hpp>
#include <sandbox_host/egress/proxy/tunnel_relay.hpp>
#include <sandbox_host/host/worker_pool.hpp>

#include "session_sockets.hpp"

#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

namespace sandbox_host::egress {

using Clock = std::chrono::steady_clock;

[[noreturn]] inline void fail(const std::string &what) {
  throw std::system_error(errno, std::generic_category(), what);
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

inline bool send_now(int fd, std::string_view bytes) {
  return ::send(fd, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL) ==
         static_cast<ssize_t>(bytes.size());
}

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

}  // namespace sandbox_host::egress
