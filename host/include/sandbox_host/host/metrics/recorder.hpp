// What the host tells its metrics: the events an operator counts and alerts on, reported
// where they happen (the audit sink, the launch service, the broker, the egress proxy, the
// token keeper). The core only calls this interface; `serve`'s [metrics] installs the one
// implementation (metrics/host_metrics.hpp), which brings prometheus-cpp, so that neither
// the library nor sandbox-host's stage 1, run on every launch, links it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>

namespace sandbox_host::metrics {

// Every argument is one of a small, fixed set of words the calling code chose (a backend's
// name, an enabled operation's, a rule), never a client's text: they become label values.
// The base records nothing: it is what a process without [metrics] reports to.
class Recorder {
 public:
  virtual ~Recorder() = default;

  // A refusal the audit sink records: its component and rule.
  virtual void refusal(std::string_view /*component*/, std::string_view /*rule*/) {}
  // A launch of the launch service: the backend that ran it ("none" when it was refused
  // before one was chosen), its outcome, and the time from its request to its plugin's start.
  virtual void launch(std::string_view /*backend*/, std::string_view /*outcome*/,
                      std::chrono::nanoseconds /*took*/) {}
  // A plugin of the launch service started (+1) or ended (-1).
  virtual void plugin_running(int /*delta*/) {}
  // A broker request answered or refused by its operation: the operation's name (an enabled
  // one, else "unknown"), the outcome, and how long it took.
  virtual void broker_request(std::string_view /*op*/, std::string_view /*outcome*/,
                              std::chrono::nanoseconds /*took*/) {}
  // An egress connection: its kind ("http", "connect", "socks5", "tls") and outcome.
  virtual void egress_connection(std::string_view /*kind*/, std::string_view /*outcome*/) {}
  // A connection the egress proxy refused, by the rule that refused it.
  virtual void egress_refusal(std::string_view /*rule*/) {}
  // A tunnel of the egress proxy opened (+1) or closed (-1).
  virtual void egress_tunnels_open(int /*delta*/) {}
  // Bytes one session of the egress proxy carried, when it ended (a tunnel, a forwarded
  // request, a TLS-terminated session): what its client sent and what its upstream sent.
  virtual void egress_bytes(std::uint64_t /*from_clients*/, std::uint64_t /*to_clients*/) {}
  // A read of a credential the token keeper keeps ("token", "parent_proxy"): good or failed.
  virtual void credential_read(std::string_view /*credential*/, bool /*good*/) {}
};

// The recorder installed, or the base that records nothing. The caller holds it for the
// call, so a recorder uninstalled meanwhile stays alive until its last call returns.
std::shared_ptr<Recorder> recorder() noexcept;

// Installs recorder for the whole process, in place of any other; null uninstalls.
void install(std::shared_ptr<Recorder> recorder) noexcept;

}  // namespace sandbox_host::metrics
