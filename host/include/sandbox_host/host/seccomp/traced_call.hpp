// What `run --learn` sees of a plugin: each system call of the learn filter's list
// (backends' learn_traced_calls.hpp) stops before it runs, the host's seccomp supervisor
// hands it to the observer, then lets it run as the plugin's confinement decides. The
// observer only looks: nothing it does changes what the call may reach.
#pragma once

#include <linux/seccomp.h>
#include <sys/types.h>

#include <cstdint>

namespace sandbox_host {

struct TracedCall {
  pid_t pid = 0;         // the calling thread, in the host's pid namespace
  std::uint64_t id = 0;  // the notification's cookie
  seccomp_data data{};   // number, architecture, arguments
  int listener = -1;     // the listener the notification came on
  // Whether the call is still waiting for its answer: memory read from the thread after
  // this returned true was the caller's when it made the call (SECCOMP_IOCTL_NOTIF_ID_VALID).
  bool still_pending() const noexcept;
};

class TracedCallObserver {
 public:
  virtual ~TracedCallObserver() = default;
  // Called on the supervisor's thread, one call at a time, before the call runs. Must not
  // block on the plugin: the thread serves every sandbox of this host.
  virtual void traced(const TracedCall &call) noexcept = 0;
};

}  // namespace sandbox_host
