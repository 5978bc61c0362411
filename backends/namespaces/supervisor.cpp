#include "supervisor.hpp"

#include <sys/wait.h>

#include <cerrno>
#include <initializer_list>

namespace sandbox_host::namespaces {

sigset_t supervised_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) {
    sigaddset(&set, sig);
  }
  return set;
}

int supervise(pid_t child) {
  const sigset_t set = supervised_signals();
  for (;;) {
    siginfo_t info{};
    int sig = ::sigwaitinfo(&set, &info);
    if (sig < 0) {
      if (errno == EINTR) continue;
      return 128 + SIGKILL;  // cannot wait any more: report it as a kill, never as success
    }
    if (sig != SIGCHLD) {
      ::kill(child, sig);
      continue;
    }
    for (;;) {
      int status = 0;
      pid_t reaped = ::waitpid(-1, &status, WNOHANG);
      if (reaped <= 0) break;
      if (reaped != child) continue;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    }
  }
}

}  // namespace sandbox_host::namespaces
