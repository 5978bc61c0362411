// The core's egress interface: what network "proxied" means on this host. A proxied launch
// is pointed at a route (a unix socket on the host that the sandbox's 127.0.0.1:<port> is
// relayed to, and an egress directory bound read-only), and the plugin's variables follow
// from the route (egress_client.hpp). Which implementation serves the route is the
// config's [egress] implementation: the proxy sandbox-host has built in, or an egress
// module. Launches, policies and serving go through this interface alone.
#pragma once

#include <sandbox_host/egress_client.hpp>
#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/registry.hpp>
#include <sandbox_host/spec.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace sandbox_host {

// Points spec's network at route: Spec::proxy_socket, proxy_port, egress_dir.
void route_spec(Spec &spec, const EgressRoute &route);

// An egress serving; destroying it stops it and returns once it no longer runs.
class RunningEgress {
 public:
  virtual ~RunningEgress() = default;
  // For the operator: where it listens, and its egress directory.
  virtual std::string description() const = 0;
};

// What serving needs from the process that serves.
struct EgressServing {
  AuditSink &audit;
  // sandbox-host itself, which the egress directory's gpg script runs.
  std::filesystem::path exe;
  // What an egress did that is no refusal.
  std::function<void(const std::string &)> log;
  // Starts the built-in proxy, whose code only sandbox-host-broker links (it brings
  // OpenSSL, which a launch should not load); empty elsewhere.
  std::function<std::unique_ptr<RunningEgress>(const EgressConfig &, const EgressServing &)>
      builtin_proxy;
};

class Egress {
 public:
  virtual ~Egress() = default;
  // Where a proxied launch's network leads now; throws, naming the implementation, when it
  // cannot say.
  virtual EgressRoute route() const = 0;
  // Serves until the result is destroyed; throws when it cannot start.
  virtual std::unique_ptr<RunningEgress> start(const EgressServing &serving) const = 0;
};

// The implementation config names, an egress module loaded through registry on first use.
// Throws std::runtime_error naming the module and why it did not load.
std::unique_ptr<Egress> make_egress(const EgressConfig &config, Registry &registry,
                                    AuditSink &audit);

}  // namespace sandbox_host
