// A session: what a connection asked for (a CONNECT, a forwarded HTTP request, a SOCKS5
// connect), checked against the allow list and taken upstream.
#include <sandbox_host/egress/destination/tcp_connect.hpp>
#include <sandbox_host/egress/proxy/counted_stream.hpp>
#include <sandbox_host/egress/proxy/http_exchange.hpp>
#include <sandbox_host/egress/proxy/parent_proxy.hpp>
#include <sandbox_host/host/metrics/recorder.hpp>

#include "proxy_impl.hpp"

#include <algorithm>
#include <cstring>

namespace sandbox_host::egress {
namespace {

// host:port as people write it, an IPv6 address in brackets.
std::string endpoint(const std::string &host, std::uint16_t port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

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

}  // namespace sandbox_host::egress
