#include "supervisor.hpp"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <initializer_list>

namespace sandbox_host::namespaces {
namespace {

constexpr int kKilledStatus = 128 + SIGKILL;

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return kKilledStatus;
}

}  // namespace

sigset_t supervised_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) {
    sigaddset(&set, sig);
  }
  return set;
}

int supervise(pid_t plugin) {
  const sigset_t set = supervised_signals();
  for (;;) {
    siginfo_t info{};
    int sig = ::sigwaitinfo(&set, &info);
    if (sig < 0) {
      if (errno == EINTR) continue;
      return kKilledStatus;  // cannot wait any more: report it as a kill, never as success
    }
    if (sig != SIGCHLD) {
      ::kill(plugin, sig);
      continue;
    }
    for (;;) {
      int status = 0;
      pid_t reaped = ::waitpid(-1, &status, WNOHANG);
      if (reaped <= 0) break;
      if (reaped == plugin && (WIFEXITED(status) || WIFSIGNALED(status))) {
        return shell_status(status);
      }
    }
  }
}

void report_and_wait_for_the_end(int status_fd, int status) {
  while (::write(status_fd, &status, sizeof status) < 0 && errno == EINTR) {
  }
  // Every signal is blocked or, for pid 1, ignored: only the parent-death SIGKILL ends this.
  for (;;) ::pause();
}

int await_report(pid_t init, int status_fd) {
  const sigset_t set = supervised_signals();
  const int signals = ::signalfd(-1, &set, SFD_CLOEXEC);
  if (signals < 0) return kKilledStatus;
  for (;;) {
    pollfd fds[2] = {{status_fd, POLLIN, 0}, {signals, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents != 0) {
      int status = 0;
      ssize_t n = ::read(status_fd, &status, sizeof status);
      if (n < 0 && errno == EINTR) continue;
      if (n == sizeof status) return status;
      break;  // the init closed the pipe without a report: it is gone
    }
    signalfd_siginfo info{};
    if (::read(signals, &info, sizeof info) != sizeof info) continue;
    const int sig = static_cast<int>(info.ssi_signo);
    if (sig == SIGCHLD) {
      // A report written just before the init died is still in the pipe.
      pollfd pending{status_fd, POLLIN, 0};
      if (::poll(&pending, 1, 0) > 0) continue;
      break;
    }
    ::kill(init, sig);
  }
  int status = 0;
  while (::waitpid(init, &status, 0) < 0) {
    if (errno != EINTR) return kKilledStatus;
  }
  return shell_status(status);
}

}  // namespace sandbox_host::namespaces
