#include "exec_child.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

namespace sandbox_host {
namespace {

// What the child leaves in the host's memory when it cannot execute: the only write it
// makes there.
struct Failure {
  int error = 0;
  const char *step = nullptr;
};

[[noreturn]] void fail(volatile Failure *failure, const char *step) {
  failure->error = errno;
  failure->step = step;
  ::_exit(127);
}

// Each stdio descriptor at its number. One that is itself 0, 1 or 2 but not its own target
// is moved above 2 first, so that an earlier dup2 cannot overwrite it.
void place_stdio(const ExecPlan &plan, volatile Failure *failure) {
  int from[3];
  for (int target = 0; target < 3; ++target) {
    from[target] = plan.stdio[target];
    if (from[target] < 3 && from[target] != target) {
      from[target] = ::fcntl(from[target], F_DUPFD_CLOEXEC, 3);
      if (from[target] < 0) fail(failure, "stdio: F_DUPFD");
    }
  }
  for (int target = 0; target < 3; ++target) {
    if (from[target] == target) {
      if (::fcntl(target, F_SETFD, 0) != 0) fail(failure, "stdio: F_SETFD");
    } else if (::dup2(from[target], target) != target) {
      fail(failure, "stdio: dup2");
    }
  }
}

void close_the_rest(const ExecPlan &plan, volatile Failure *failure) {
  unsigned next = 0;
  for (int keep : plan.keep) {
    if (static_cast<unsigned>(keep) > next && ::close_range(next, keep - 1, 0) != 0) {
      fail(failure, "close_range");
    }
    next = static_cast<unsigned>(keep) + 1;
  }
  if (::close_range(next, ~0U, 0) != 0) fail(failure, "close_range");
}

// A signal the host handles would run the host's handler on the host's memory between the
// unblocking below and the execve: the child takes each such signal's default instead.
void default_handled_signals(volatile Failure *failure) {
  struct sigaction fallback = {};
  fallback.sa_handler = SIG_DFL;
  for (int signal = 1; signal < NSIG; ++signal) {
    if (signal == SIGKILL || signal == SIGSTOP) continue;
    struct sigaction current;
    if (::sigaction(signal, nullptr, &current) != 0) continue;  // the C library's own
    if (current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN) continue;
    if (::sigaction(signal, &fallback, nullptr) != 0) fail(failure, "sigaction");
  }
}

[[noreturn]] void run_child(const ExecPlan &plan, volatile Failure *failure) {
  place_stdio(plan, failure);
  close_the_rest(plan, failure);
  // Own session: the plugin has no controlling terminal, so TIOCSTI cannot reach ours.
  if (::setsid() < 0) fail(failure, "setsid");
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(failure, "PR_SET_PDEATHSIG");
  // The host may have died before the line above armed the signal.
  if (::getppid() != plan.parent) {
    errno = ESRCH;
    fail(failure, "the host ended");
  }
  for (int fd : plan.passed) {
    if (::fcntl(fd, F_SETFD, 0) != 0) fail(failure, "F_SETFD");
  }
  default_handled_signals(failure);
  // Signals sent to the host are for its other threads; the child starts with none blocked.
  sigset_t none;
  sigemptyset(&none);
  if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0) fail(failure, "sigprocmask");
  ::execve(plan.program, plan.argv, plan.envp);
  fail(failure, "execve");
}

// In a function of its own, so that no variable of exec_child lives in the frame the child
// borrows.
__attribute__((noinline)) pid_t start(const ExecPlan &plan, volatile Failure *failure) {
  const pid_t pid = ::vfork();
  if (pid == 0) run_child(plan, failure);
  return pid;
}

}  // namespace

pid_t exec_child(const ExecPlan &plan) {
  // Blocked across the vfork: no handler of the host's runs in the child before it has
  // set its signals up.
  sigset_t all, previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  volatile Failure failure;
  const pid_t pid = start(plan, &failure);
  const int vfork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (pid < 0) {
    throw std::system_error(vfork_error, std::generic_category(),
                            std::string("spawn ") + plan.program + ": vfork");
  }
  if (failure.error != 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw std::system_error(failure.error, std::generic_category(),
                            std::string("spawn ") + plan.program + ": " + failure.step);
  }
  return pid;
}

}  // namespace sandbox_host
