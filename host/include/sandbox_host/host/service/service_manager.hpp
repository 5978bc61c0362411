// What `sandbox-host serve` tells the service manager that started it (systemd's notify
// protocol: readiness, status text, watchdog pings, stopping), and the variables that carry
// it, taken out of serve's environment before anything else can read or pass them on.
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <sys/socket.h>
#include <sys/un.h>

#include <chrono>
#include <optional>
#include <string_view>

namespace sandbox_host {

class ServiceManager {
 public:
  // Takes NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID out of this process's environment
  // (unsetenv: call it before any thread starts), so that no child of serve (stage 1, a
  // host command, the token keeper) inherits them. Without NOTIFY_SOCKET every notice is
  // dropped. Throws naming a NOTIFY_SOCKET that is no unix socket address.
  static ServiceManager from_environment();

  bool notifies() const noexcept { return static_cast<bool>(socket_); }
  // Present when the manager asked this very process (WATCHDOG_PID) for pings.
  std::optional<std::chrono::microseconds> watchdog_interval() const noexcept {
    return watchdog_interval_;
  }
  // One notice of newline-separated assignments ("READY=1\nSTATUS=..."); a notice the
  // manager does not take is lost, as sd_notify(3)'s are: serving never depends on it.
  void notify(std::string_view state) const noexcept;

 private:
  UniqueFd socket_;
  sockaddr_un address_{};
  socklen_t address_length_ = 0;
  std::optional<std::chrono::microseconds> watchdog_interval_;
};

}  // namespace sandbox_host
