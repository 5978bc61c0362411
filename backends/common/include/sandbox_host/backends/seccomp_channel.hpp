// Stage 1's end of the channel its filter's listener goes to the host on (the SDK's
// seccomp_channel.hpp has the protocol; the host's supervisor is host/src/seccomp/).
#pragma once

#include <sandbox_host/seccomp_channel.hpp>

namespace sandbox_host::backends {

// How a filter answers (seccomp_rules.hpp says what each program holds).
enum class Verdicts {
  errno_only,        // each refusal with its errno, at once: nobody records it
  notify,            // each refusal through the host's supervisor, which records it
  notify_and_trace,  // that, and the calls `run --learn` looks at (learn_traced_calls.hpp)
};

class SeccompChannel {
 public:
  SeccompChannel() = default;
  // Takes the variable out of the environment; none where it is unset. Throws SetupError
  // when it is malformed or names a descriptor that is not a socket.
  static SeccompChannel take_from_environment();

  SeccompChannel(SeccompChannel &&other) noexcept;
  SeccompChannel &operator=(SeccompChannel &&other) noexcept;
  SeccompChannel(const SeccompChannel &) = delete;
  SeccompChannel &operator=(const SeccompChannel &) = delete;
  ~SeccompChannel();

  int fd() const noexcept { return fd_; }
  Verdicts verdicts() const noexcept { return verdicts_; }
  // Sends listener to the host and closes the channel. Throws SetupError.
  void hand_over(int listener);
  // Tells the host that the kernel refused a listener (error), and closes the channel: the
  // filter answers the refusals itself. Best effort: the host notes a channel closed without
  // a word too.
  void decline(int error) noexcept;
  // Closes the channel: the host then records nothing of this sandbox.
  void close() noexcept;

 private:
  int fd_ = -1;
  Verdicts verdicts_ = Verdicts::errno_only;
};

}  // namespace sandbox_host::backends
