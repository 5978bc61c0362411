#include <sandbox_host/egress/proxy/authorization.hpp>
#include <sandbox_host/egress/proxy/counted_stream.hpp>
#include <sandbox_host/egress/proxy/http_exchange.hpp>
#include <sandbox_host/egress/proxy/tls_interception.hpp>

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace sandbox_host::egress {
namespace {

// host as the allow list compares it, or empty when it is no host name at all.
std::string normalized(std::string_view host) {
  try {
    return normalize_host_name(host);
  } catch (const std::invalid_argument &) {
    return {};
  }
}

// What the handshake callbacks of one connection learn, for the refusal to name.
struct HandshakeState {
  std::string host;
  std::string refusal;
};
int state_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// The SNI a client sends must name the CONNECT target: a client that tunnels to one host
// and asks TLS for another is refused before it gets a certificate.
int check_server_name(SSL *ssl, int *alert, void *) {
  auto *state = static_cast<HandshakeState *>(SSL_get_ex_data(ssl, state_index()));
  const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  if (name == nullptr) return SSL_TLSEXT_ERR_OK;
  if (normalized(name) == state->host) return SSL_TLSEXT_ERR_OK;
  state->refusal = "the TLS server name differs from the CONNECT target " + state->host;
  *alert = SSL_AD_UNRECOGNIZED_NAME;
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

// HTTP/1.1 only: the proxy reads every request, which it could not under HTTP/2.
int select_http11(SSL *ssl, const unsigned char **out, unsigned char *out_length,
                  const unsigned char *offered, unsigned int offered_length, void *) {
  static const unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned char *selected = nullptr;
  if (SSL_select_next_proto(&selected, out_length, kHttp11, sizeof kHttp11, offered,
                            offered_length) == OPENSSL_NPN_NEGOTIATED) {
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
  }
  auto *state = static_cast<HandshakeState *>(SSL_get_ex_data(ssl, state_index()));
  state->refusal = "the client offered ALPN without http/1.1 (HTTP/2 is not terminated)";
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

// A TLS connection over a socket that blocks, each wait bounded by idle (SO_RCVTIMEO and
// SO_SNDTIMEO): a read that has to wait is one call, where a non-blocking socket takes a
// read that fails, a poll and the read again, twice per proxied request.
class TlsStream final : public ByteStream {
 public:
  TlsStream(SSL *ssl, int fd, std::string side) : ssl_(ssl), fd_(fd), side_(std::move(side)) {}

  // Runs op until it is done. Returns op's result (> 0), or 0 for a clean close on read.
  template <class Op>
  int drive(Op op, const char *what) {
    for (;;) {
      ERR_clear_error();
      errno = 0;  // so that an EINTR below is this call's
      const int n = op();
      if (n > 0) return n;
      const int error = SSL_get_error(ssl_, n);
      if (error == SSL_ERROR_ZERO_RETURN) return 0;
      if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
        // The socket's timeout passed, unless a signal cut the wait short or the socket
        // became ready since.
        if (errno == EINTR) continue;
        pollfd ready{fd_, static_cast<short>(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
        if (::poll(&ready, 1, 0) == 1) continue;
        throw StreamError(side_ + " sent nothing while the proxy waited to " + what);
      }
      // A peer that closes without close_notify ends the stream as well.
      if (error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) return 0;
      throw StreamError(openssl_error(side_ + ": " + what));
    }
  }

  std::size_t read_some(std::string &buffer) override {
    char chunk[16 * 1024];
    const int n = drive([&] { return SSL_read(ssl_, chunk, sizeof chunk); }, "read");
    buffer.append(chunk, static_cast<std::size_t>(n));
    return static_cast<std::size_t>(n);
  }

  void write_all(std::string_view bytes) override {
    while (!bytes.empty()) {
      const int n = drive(
          [&] {
            return SSL_write(ssl_, bytes.data(),
                             static_cast<int>(std::min<std::size_t>(bytes.size(), 1 << 20)));
          },
          "write");
      if (n == 0) throw StreamError(side_ + " closed the connection");
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  void close() {
    ERR_clear_error();
    SSL_shutdown(ssl_);
  }

 private:
  SSL *ssl_;
  int fd_;
  std::string side_;
};

// The socket blocks, and each read or write that waits gives up after idle.
void blocking_within(int fd, std::chrono::milliseconds idle) {
  const int flags = ::fcntl(fd, F_GETFL);
  timeval limit{static_cast<time_t>(idle.count() / 1000),
                static_cast<suseconds_t>((idle.count() % 1000) * 1000)};
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit) != 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit) != 0) {
    throw StreamError(std::string("cannot bound the connection's waits: ") + std::strerror(errno));
  }
}

// host, or host:443, as an inner request's Host may say it.
bool names_target(std::string_view authority, const std::string &host, std::uint16_t port) {
  const std::string port_suffix = ":" + std::to_string(port);
  if (authority.size() > port_suffix.size() && authority.ends_with(port_suffix)) {
    authority.remove_suffix(port_suffix.size());
  }
  return normalized(authority) == host;
}

using Tell = std::function<void(const std::string &)>;

// The TLS handshake with the client, on a leaf for the CONNECT target. False when the
// client closed or was refused (told, with the reason the handshake's callbacks gave).
bool accept_client(TlsStream &client, SSL *ssl, const HandshakeState &state, const Tell &tell) {
  try {
    return client.drive([&] { return SSL_accept(ssl); }, "finish the TLS handshake") != 0;
  } catch (const StreamError &e) {
    tell("TLS refused: " + (state.refusal.empty() ? std::string(e.what()) : state.refusal));
    return false;
  }
}

// An SSL to the upstream that verifies its certificate names host.
SslPtr upstream_ssl(SSL_CTX *context, const InterceptedSession &session) {
  SslPtr ssl(SSL_new(context));
  if (!ssl) throw std::runtime_error(openssl_error("cannot make a TLS connection"));
  SSL_set_tlsext_host_name(ssl.get(), session.host.c_str());
  SSL_set1_host(ssl.get(), session.host.c_str());
  SSL_set_fd(ssl.get(), session.upstream_fd);
  return ssl;
}

// The TLS handshake with the upstream: empty when done, else why it failed, which each
// inner request is then refused with (a 502 the client can read, inside its own TLS).
std::string connect_upstream(TlsStream &upstream, SSL *ssl) {
  try {
    upstream.drive([&] { return SSL_connect(ssl); }, "finish the TLS handshake");
    return {};
  } catch (const StreamError &e) {
    const long verified = SSL_get_verify_result(ssl);
    return verified != X509_V_OK ? std::string("the upstream's certificate is not trusted: ") +
                                       X509_verify_cert_error_string(verified)
                                 : std::string(e.what());
  }
}

// A refused inner request: the status the client gets, and why.
struct Refusal {
  int status;
  std::string why;
};

// The requests inside one terminated connection, each held to the CONNECT target and the
// allow list before it goes on with the token in place of the client's credentials.
class InnerRequests {
 public:
  InnerRequests(const InterceptedSession &session, const HostAllowList &allow,
                const std::shared_ptr<Token> &token, const Tell &tell)
      : session_(session), allow_(allow), token_(token), tell_(tell) {}

  // Relays them until one is refused, one leaves the connection unusable or the client
  // closes; upstream_failure, when not empty, refuses the first.
  void relay(ByteStream &client, ByteStream &upstream, const std::string &upstream_failure) {
    std::string client_buffer, upstream_buffer;
    CountedStream counted_client(client), counted_upstream(upstream);
    const ReportedBytes report(counted_client, counted_upstream);
    auto refuse = [&](const Refusal &refusal) {
      tell_("refused " + std::to_string(refusal.status) + ": " + refusal.why);
      client.write_all(proxy_response(refusal.status, "sandbox-host egress: " + refusal.why));
    };
    try {
      for (;;) {
        ReadHead read = read_request_head(counted_client, client_buffer, HttpLimits{});
        if (read.stream_ended) {
          if (!client_buffer.empty()) tell_("the client closed the connection inside a request");
          return;
        }
        if (read.request.state == ParseState::error) {
          return refuse({read.request.error.status, read.request.error.reason});
        }
        client_buffer.erase(0, read.request.consumed);
        HttpRequestHead head = std::move(read.request.head);
        if (!upstream_failure.empty()) return refuse({502, upstream_failure});
        if (auto refusal = refusal_of(head)) return refuse(*refusal);
        put_token(head);
        head.form = HttpRequestHead::Form::origin;
        Exchange exchange(counted_client, client_buffer, counted_upstream, upstream_buffer);
        try {
          if (!exchange.run(std::move(head), false).reusable) return;
        } catch (const HttpParseError &e) {
          if (exchange.response_started()) throw;
          return refuse({e.error().status, e.error().reason});
        } catch (const StreamError &e) {
          if (exchange.response_started()) throw;
          return refuse({502, e.what()});
        }
      }
    } catch (const StreamError &e) {
      tell_(e.what());
    } catch (const HttpParseError &e) {
      tell_(e.error().reason);
    }
  }

 private:
  // Why head may not go to the CONNECT target; nullopt when it may.
  std::optional<Refusal> refusal_of(const HttpRequestHead &head) const {
    const std::string &host = session_.host;
    if (head.form == HttpRequestHead::Form::absolute &&
        (head.scheme != "https" ||
         !names_target(head.host + ":" + std::to_string(head.port), host, session_.port))) {
      return Refusal{421, "the request names " + head.scheme + "://" + head.host +
                              ", not the CONNECT target " + host};
    }
    if (head.form != HttpRequestHead::Form::origin &&
        head.form != HttpRequestHead::Form::absolute) {
      return Refusal{400, "inside a tunnel, requests are in origin-form (GET /path)"};
    }
    const std::string *host_header = head.header("Host");
    if (host_header == nullptr || !names_target(*host_header, host, session_.port)) {
      return Refusal{421, "the request's Host differs from the CONNECT target " + host};
    }
    if (head.upgrade) return Refusal{501, "Upgrade (h2c, WebSocket) is not passed on for " + host};
    const AllowDecision decision = allow_.decide(host, session_.port);
    if (!decision.allowed) return Refusal{403, host + " is not allowed: " + decision.rule};
    return std::nullopt;
  }

  // The token replaces whatever the client sent, for this host alone; without one the
  // request goes on without credentials, which is told once.
  void put_token(HttpRequestHead &head) {
    erase_headers(head.headers, "Authorization");
    const std::string current = token_ ? token_->get() : std::string();
    if (!current.empty()) {
      head.headers.push_back({"Authorization", authorization(session_.host, current)});
    } else if (!told_no_token_) {
      tell_("no token held; the request goes without credentials");
      told_no_token_ = true;
    }
  }

  const InterceptedSession &session_;
  const HostAllowList &allow_;
  const std::shared_ptr<Token> &token_;
  const Tell &tell_;
  bool told_no_token_ = false;
};

}  // namespace

TlsInterceptor::TlsInterceptor(std::shared_ptr<CertificateAuthority> ca,
                               const std::filesystem::path &upstream_roots)
    : ca_(std::move(ca)), upstream_context_(SSL_CTX_new(TLS_client_method())) {
  if (!ca_) throw std::invalid_argument("TLS termination needs the proxy's CA");
  SSL_CTX *context = upstream_context_.get();
  if (context == nullptr)
    throw std::runtime_error(openssl_error("cannot make a TLS client context"));
  SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
  // A record's header and body in one read(2), not two.
  SSL_CTX_set_read_ahead(context, 1);
  SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
  const int loaded = upstream_roots.empty()
                         ? SSL_CTX_set_default_verify_paths(context)
                         : SSL_CTX_load_verify_locations(context, upstream_roots.c_str(), nullptr);
  if (loaded != 1) {
    throw std::runtime_error(openssl_error(
        "cannot load the upstream roots " +
        (upstream_roots.empty() ? std::string("(system default)") : upstream_roots.string())));
  }
  static const unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_CTX_set_alpn_protos(context, kHttp11, sizeof kHttp11);
}

SslPtr TlsInterceptor::new_server_ssl(const std::string &host) {
  auto leaf = ca_->leaf_for(host);
  std::lock_guard lock(contexts_mutex_);
  HostContext &entry = contexts_[host];
  if (entry.leaf != leaf) {
    SslCtxPtr context(SSL_CTX_new(TLS_server_method()));
    if (!context) throw std::runtime_error(openssl_error("cannot make a TLS server context"));
    SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION);
    SSL_CTX_set_read_ahead(context.get(), 1);
    if (SSL_CTX_use_certificate(context.get(), leaf->certificate()) != 1 ||
        SSL_CTX_use_PrivateKey(context.get(), leaf->key()) != 1) {
      throw std::runtime_error(openssl_error("cannot use the leaf certificate of " + host));
    }
    SSL_CTX_set_tlsext_servername_callback(context.get(), check_server_name);
    SSL_CTX_set_alpn_select_cb(context.get(), select_http11, nullptr);
    entry = {leaf, std::move(context)};
  }
  SslPtr ssl(SSL_new(entry.context.get()));
  if (!ssl) throw std::runtime_error(openssl_error("cannot make a TLS connection"));
  return ssl;
}

void TlsInterceptor::serve(const InterceptedSession &session, const HostAllowList &allow,
                           const std::shared_ptr<Token> &token, std::chrono::milliseconds idle,
                           const std::function<void(const std::string &)> &say) {
  const std::string where =
      session.peer + " -> " + session.host + ":" + std::to_string(session.port);
  const Tell tell = [&](const std::string &line) {
    if (say) say("egress: " + where + ": " + line);
  };
  blocking_within(session.client_fd, idle);
  blocking_within(session.upstream_fd, idle);

  HandshakeState state{session.host, {}};
  SslPtr client_ssl = new_server_ssl(session.host);
  SSL_set_ex_data(client_ssl.get(), state_index(), &state);
  SSL_set_fd(client_ssl.get(), session.client_fd);
  TlsStream client(client_ssl.get(), session.client_fd, "the client");
  if (!accept_client(client, client_ssl.get(), state, tell)) return;

  SslPtr to_upstream = upstream_ssl(upstream_context_.get(), session);
  TlsStream upstream(to_upstream.get(), session.upstream_fd, "the upstream");
  const std::string upstream_failure = connect_upstream(upstream, to_upstream.get());

  InnerRequests(session, allow, token, tell).relay(client, upstream, upstream_failure);
  client.close();
  if (upstream_failure.empty()) upstream.close();
}

}  // namespace sandbox_host::egress
