// `sandbox-host serve` with [metrics] (TCP on a free loopback port and a unix socket), its
// launch service, the broker and an egress proxy in front of a stand-in upstream on
// loopback, run as root or as nobody; and the workload the tests count.
#pragma once

#include "fixtures.hpp"
#include "process.hpp"
#include "serve_fixture.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace sandbox_host::test {

// Text that must never reach the exposition: in the token, a request's path and header.
inline constexpr const char *kSecretMark = "SECRETmark7f3a";

class MetricsService {
 public:
  // metrics_lines: more keys of the [metrics] table; egress_reaches_metrics: the egress
  // allow list also names the endpoint's own address, as a careless operator's could.
  explicit MetricsService(User user, const std::string &metrics_lines = "",
                          bool egress_reaches_metrics = false);

  const Service &service() const { return *service_; }
  std::uint16_t metrics_port() const { return metrics_port_; }
  std::string tcp_address() const { return "tcp:127.0.0.1:" + std::to_string(metrics_port_); }
  std::string unix_address() const { return "unix:" + metrics_socket().string(); }
  std::filesystem::path metrics_socket() const { return dir_.dir() / "m/metrics.sock"; }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(metrics_port_) + "/metrics";
  }

  // A command as the service's user, outside any sandbox.
  ProcessResult as_user(std::vector<std::string> argv) const;
  // curl as the service's user (no proxy unless args name one).
  ProcessResult curl(const std::vector<std::string> &args) const;
  // The exposition, as an unsandboxed process of the service's user reads it.
  std::string scrape() const;

  // N launches of /bin/true through the launch service, and one it refuses (backend off).
  void launch(int n) const;
  // M broker requests of ping, and one of an operation that is not enabled.
  void ask(int m) const;
  // allowed forwarded requests, one CONNECT tunnel, and refused ones (a host not allowed);
  // each carries the secret mark in its path and a header.
  void egress(int allowed, int refused) const;
  // The egress proxy's address, for curl -x.
  std::string proxy() const { return "http://127.0.0.1:" + std::to_string(egress_port_); }
  // The port of the plain HTTP upstream that plain.test names through the proxy.
  std::uint16_t upstream_port() const { return upstream_port_; }

 private:
  TempFile dir_{"", "unused"};
  std::uint16_t metrics_port_;
  std::uint16_t egress_port_;
  std::uint16_t upstream_port_;
  std::unique_ptr<RunningProcess> upstream_;
  std::unique_ptr<Service> service_;
};

}  // namespace sandbox_host::test
