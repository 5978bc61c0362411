// TLS terminated for an inject host (issue 6, "Credential injection"): the client gets a
// leaf of the proxy's CA, the upstream's own certificate is verified against the roots,
// and every inner request is held to the CONNECT target and the allow list before it goes
// on with the token's Authorization header in place of whatever the client sent.
#pragma once

#include <sandbox_host/egress/destination/host_allow_list.hpp>
#include <sandbox_host/egress/proxy/certificate_authority.hpp>
#include <sandbox_host/egress/proxy/token_keeper.hpp>

#include <openssl/ssl.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace sandbox_host::egress {

using SslCtxPtr = OpenSslPtr<SSL_CTX, SSL_CTX_free>;
using SslPtr = OpenSslPtr<SSL, SSL_free>;

struct InterceptedSession {
  int client_fd = -1;    // after the proxy's "200 Connection established"
  int upstream_fd = -1;  // connected to a checked address of host
  std::string host;      // the CONNECT target, normalised
  std::uint16_t port = 443;
  std::string peer;  // for say() lines
};

class TlsInterceptor {
 public:
  // upstream_roots: a PEM bundle, or empty for the system's default roots. Throws
  // std::runtime_error naming what OpenSSL could not load.
  TlsInterceptor(std::shared_ptr<CertificateAuthority> ca,
                 const std::filesystem::path &upstream_roots);

  // Serves one terminated connection until either side ends it. say() gets a line for
  // each refused request or failure, never a header value.
  void serve(const InterceptedSession &session, const HostAllowList &allow,
             const std::shared_ptr<Token> &token, std::chrono::milliseconds idle,
             const std::function<void(const std::string &)> &say);

 private:
  // A server-side SSL for host, made while its context is current (a reissued leaf
  // replaces the context; SSLs made before keep theirs).
  SslPtr new_server_ssl(const std::string &host);

  std::shared_ptr<CertificateAuthority> ca_;
  SslCtxPtr upstream_context_;
  std::mutex contexts_mutex_;
  struct HostContext {
    std::shared_ptr<const LeafCertificate> leaf;
    SslCtxPtr context;
  };
  std::map<std::string, HostContext> contexts_;
};

}  // namespace sandbox_host::egress
