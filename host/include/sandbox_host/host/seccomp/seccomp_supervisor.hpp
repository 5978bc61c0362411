// The host's seccomp supervisor: one thread per host process that receives each sandbox's
// seccomp listener (backends' seccomp_channel.hpp), answers every refused call with the
// errno its rule stands for, and records it in the audit sink under the plugin, the backend
// and the rule; under `run --learn` it shows the traced calls to the observer and lets them
// run. What a plugin can do to it, and what it cannot, is in docs/security-model.md.
#pragma once

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/seccomp/traced_call.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <memory>
#include <mutex>
#include <string>

namespace sandbox_host {

// What spawn() needs to have a launch's refusals recorded (LaunchCommand::seccomp).
struct SeccompOrder {
  std::string plugin;  // "prepared" until a prepared sandbox's launch names it
  std::string backend;
  std::shared_ptr<AuditSink> audit;
  std::shared_ptr<TracedCallObserver> learn;  // run --learn; null otherwise
};

// A sandbox's entry with the supervisor, from its channel until every process under its
// filter is gone; the launch keeps this to name the plugin of a prepared sandbox.
class SeccompWatch {
 public:
  explicit SeccompWatch(SeccompOrder order) : order_(std::move(order)) {}
  void name_plugin(const std::string &plugin);
  std::string plugin() const;
  const SeccompOrder &order() const noexcept { return order_; }

  // The supervisor is done with the sandbox: every process under its filter is gone, or it
  // never had a listener. order() holds no sink nor observer from then on.
  void finish();

 private:
  mutable std::mutex mutex_;
  SeccompOrder order_;
};

// Hands the host's end of a sandbox's channel to the supervisor, starting its thread on
// first use. Throws std::system_error when the thread or its epoll cannot be had.
std::shared_ptr<SeccompWatch> supervise_seccomp(UniqueFd channel, SeccompOrder order);

// The variable spawn() sets for stage 1: its end of the channel at fd, and whether it learns.
std::string seccomp_channel_variable(int fd, bool learn);

}  // namespace sandbox_host
