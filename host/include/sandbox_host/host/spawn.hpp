// Starting a launch command: the given stdin, stdout and stderr, no other descriptor of
// the host, its own session, and death with the thread that spawned it.
#pragma once

#include <sandbox_host/host/backend.hpp>

#include <sys/types.h>

#include <memory>
#include <vector>

namespace sandbox_host {

struct ExitStatus {
  int code = 0;    // exit code, when exited
  int signal = 0;  // terminating signal, when killed
  // What a shell would report: the code, or 128 + the signal.
  int shell_status() const noexcept { return signal != 0 ? 128 + signal : code; }
};

class Child {
 public:
  struct State;
  explicit Child(std::unique_ptr<State> state);
  Child(Child &&) noexcept;
  Child &operator=(Child &&) noexcept;
  // Kills and reaps a child nobody waited for.
  ~Child();

  pid_t pid() const noexcept;
  ExitStatus wait();

 private:
  std::unique_ptr<State> state_;
};

// The descriptors that become a child's stdin, stdout and stderr (the caller's by default).
struct Stdio {
  int in = 0;
  int out = 1;
  int err = 2;
};

// pass_fds: further descriptors the plugin may keep, at the same numbers.
Child spawn(const LaunchCommand &command, const std::vector<int> &pass_fds = {},
            const Stdio &stdio = {});

}  // namespace sandbox_host
