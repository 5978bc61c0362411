// serve's Prometheus endpoint ([metrics]): GET /metrics on loopback TCP and/or a unix socket,
// served by the host's own sockets so that every connection passes the peer check
// (scrape_peer.hpp) before a byte of it is read. A plugin reaches it (the socket by path,
// the port with network "outbound"), so it is bounded as hostile input: at most
// max_connections served at once (more are closed unanswered), a request head of
// kScrapeLimits read within request_timeout, and the answer written within it too.
#pragma once

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/metrics/host_metrics.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace sandbox_host::metrics {

class MetricsEndpoint {
 public:
  // Listens where config says and serves on threads of its own until destroyed. Throws
  // std::system_error or std::invalid_argument naming the listener it could not set up.
  MetricsEndpoint(const MetricsConfig &config, HostMetrics &metrics, AuditSink &audit);
  ~MetricsEndpoint();  // stops accepting, ends every connection, joins its threads
  MetricsEndpoint(const MetricsEndpoint &) = delete;
  MetricsEndpoint &operator=(const MetricsEndpoint &) = delete;

  // "http://127.0.0.1:9464/metrics and unix:/run/.../metrics.sock", with the port bound.
  std::string description() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sandbox_host::metrics
