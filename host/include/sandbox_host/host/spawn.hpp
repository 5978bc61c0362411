// Starting a launch command: the given stdin, stdout and stderr, no other descriptor of
// the host, its own session, and death with the thread that spawned it.
#pragma once

#include <sandbox_host/host/backend.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <sys/types.h>

#include <memory>
#include <optional>
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
  // The child's status; for a prepared sandbox's launch, the one its sandbox reported on the
  // status channel as soon as the plugin ended, without waiting for stage 1's exit.
  ExitStatus wait();

  // Holds the launch to order's bounds from now until it is reaped (limits/launch_warden.hpp);
  // spawn() does it for a command's own order, a prepared sandbox's launch when it is sent.
  void watch(WatchOrder order);

  // A prepared sandbox's launch: its refused system calls are recorded under plugin from now.
  void name_plugin(const std::string &plugin);
  // Reads the launch's end against order once wait() knows it (limits/death_report.hpp);
  // spawn() does it for a command's own order, a prepared sandbox's launch when it is sent.
  void explain_death(DeathOrder order);
  // After wait(): the bound that killed the plugin, if one did (its record is written).
  const std::optional<Death> &death() const noexcept;

  // The launch's cgroup (LaunchCommand::cgroup), or nullptr.
  PluginCgroup *cgroup() const noexcept;

  // A prepared sandbox's launch: channel carries the plugin's status (launch_channel.hpp).
  void take_status_channel(UniqueFd channel);
  // The status channel, to poll beside the pid; -1 for a child without one, and once
  // take_reported_status() found that no report will come.
  int status_fd() const noexcept;
  // Once status_fd() polled readable: true when it held the status, so that wait() returns
  // at once; false when the channel closed without one (a backend whose stage 1 execs the
  // plugin itself closes it at the exec), and the child's end is its pid's to tell.
  bool take_reported_status();

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
