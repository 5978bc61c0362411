// The egress proxy (docs/egress.md): HTTP forward proxy (absolute-form requests), CONNECT
// tunnels and a SOCKS5 entry (socks5h: names resolved here) on one port, told apart by the
// first byte, on loopback TCP and on a unix socket. Every connection is held to the host
// allow list and the destination rules; the inject hosts' TLS on port 443 is terminated
// and their requests get the token's Authorization header.
#pragma once

#include <sandbox_host/egress/destination/destination.hpp>
#include <sandbox_host/egress/destination/host_allow_list.hpp>
#include <sandbox_host/egress/destination/loopback_endpoint.hpp>
#include <sandbox_host/egress/proxy/certificate_authority.hpp>
#include <sandbox_host/egress/proxy/parent_proxy.hpp>
#include <sandbox_host/egress/proxy/token_keeper.hpp>

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sandbox_host::egress {

struct EgressOptions {
  std::optional<LoopbackEndpoint> listen;  // nullopt: no TCP listener
  std::filesystem::path socket;            // the unix socket; empty: none
  HostAllowList allow;
  AddressPolicy addresses;
  ResolverOverrides resolve;
  std::vector<std::string> inject;           // normalised host names; each also allowed
  std::shared_ptr<Token> token;              // null: no credentials to add
  std::shared_ptr<CertificateAuthority> ca;  // required when inject is not empty
  std::filesystem::path upstream_ca_bundle;  // empty: the system's roots
  std::optional<uid_t> same_user;            // serve only this uid's connections
  // Every allowed connection dialled through this HTTP proxy; nullopt: dialled directly.
  std::optional<ParentProxy> parent;
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
  std::chrono::milliseconds head_timeout{std::chrono::seconds(10)};
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(5)};
  std::size_t max_tunnels = 20000;  // CONNECT and SOCKS5 tunnels at once
  std::size_t max_sessions = 512;   // connections the proxy reads and writes itself
  // One line per refused or failed connection: peer, target, rule. Never a header value.
  std::function<void(const std::string &)> say;
  // One line per allowed connection once its upstream answered: "<peer> -> <target>: <what>"
  // (a CONNECT or SOCKS5 tunnel, a terminated TLS session, a forwarded request's method).
  // Never a path, a header value or the token. Null: allowed ones go unsaid.
  std::function<void(const std::string &)> log;
};

class EgressProxy {
 public:
  // Binds the listeners and starts serving. Throws std::system_error or
  // std::invalid_argument naming what could not be set up.
  explicit EgressProxy(EgressOptions options);
  ~EgressProxy();  // stops accepting, ends every connection, waits for its threads
  EgressProxy(const EgressProxy &) = delete;
  EgressProxy &operator=(const EgressProxy &) = delete;

  std::uint16_t port() const;  // the TCP listener's port, 0 without one
  const std::filesystem::path &socket() const;

  struct Counts {
    std::size_t tunnels = 0, sessions = 0, refused = 0;
  };
  Counts counts() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sandbox_host::egress
