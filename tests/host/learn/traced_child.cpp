#include "traced_child.hpp"

#include <sandbox_host/unique_fd.hpp>

#include <seccomp.h>

#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

namespace sandbox_host::test {
namespace {

// In the child: the filter, then the listener's number to the parent, which takes it with
// pidfd_getfd (a pipe's write is no traced call, a sendmsg would be).
[[noreturn]] void child(int report, const std::vector<const char *> &calls,
                        const std::function<int()> &action) {
  scmp_filter_ctx filter = ::seccomp_init(SCMP_ACT_ALLOW);
  if (filter == nullptr) ::_exit(120);
  for (const char *name : calls) {
    const int nr = ::seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR || ::seccomp_rule_add(filter, SCMP_ACT_NOTIFY, nr, 0) != 0) {
      ::_exit(121);
    }
  }
  if (::seccomp_load(filter) != 0) ::_exit(122);
  const int listener = ::seccomp_notify_fd(filter);
  if (listener < 0 || ::write(report, &listener, sizeof listener) != sizeof listener) {
    ::_exit(123);
  }
  ::close(report);
  ::_exit(action());
}

}  // namespace

TracedRun run_traced(const std::vector<const char *> &calls, const std::function<int()> &action,
                     const OnTracedCall &on_call) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  UniqueFd report_read(pipe_fds[0]), report_write(pipe_fds[1]);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    report_read.reset();
    child(report_write.get(), calls, action);
  }
  report_write.reset();
  TracedRun run;
  int listener_number = -1;
  UniqueFd listener;
  if (::read(report_read.get(), &listener_number, sizeof listener_number) ==
      sizeof listener_number) {
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    listener.reset(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), listener_number, 0)));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (listener && std::chrono::steady_clock::now() < deadline) {
    pollfd poll_fd{listener.get(), POLLIN, 0};
    if (::poll(&poll_fd, 1, 100) <= 0) continue;
    if ((poll_fd.revents & POLLIN) == 0) break;  // POLLHUP: no task holds the filter
    seccomp_notif notification{};
    if (::ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_RECV, &notification) != 0) continue;
    ++run.calls;
    TracedCall call;
    call.pid = static_cast<pid_t>(notification.pid);
    call.id = notification.id;
    call.data = notification.data;
    call.listener = listener.get();
    if (!on_call(call)) continue;
    seccomp_notif_resp response{};
    response.id = notification.id;
    response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ::ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_SEND, &response);
  }
  int status = 0;
  if (std::chrono::steady_clock::now() >= deadline) ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace sandbox_host::test
