#include "userns_probe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace sandbox_host::namespaces {
namespace {

// The first line of a file, or "" when it cannot be read.
std::string read_line(const std::string &path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string seccomp_mode(const std::string &proc_root) {
  std::ifstream in(proc_root + "/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Seccomp:", 0) == 0) return line.substr(line.find_first_not_of(" \t", 8));
  }
  return "";
}

}  // namespace

void explain_refusal(int error, const std::string &proc_root, ProbeReport &report) {
  const std::string failure =
      std::string("creating a user namespace failed: ") + std::strerror(error);
  if (read_line(proc_root + "/sys/user/max_user_namespaces") == "0") {
    report.reason = failure + " (user.max_user_namespaces=0)";
    report.hint = "sysctl -w user.max_user_namespaces=15000";
  } else if (read_line(proc_root + "/sys/kernel/unprivileged_userns_clone") == "0") {
    report.reason = failure + " (kernel.unprivileged_userns_clone=0)";
    report.hint = "sysctl -w kernel.unprivileged_userns_clone=1";
  } else if (read_line(proc_root + "/sys/kernel/apparmor_restrict_unprivileged_userns") == "1") {
    report.reason = failure +
                    " (AppArmor restricts unprivileged user namespaces: "
                    "kernel.apparmor_restrict_unprivileged_userns=1)";
    report.hint =
        "give sandbox-host an AppArmor profile with the userns rule, or "
        "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0";
  } else if (seccomp_mode(proc_root) == "2") {
    report.reason = failure +
                    " (a seccomp filter on this process, as a container runtime "
                    "installs, refuses it)";
    report.hint =
        "run the container with a seccomp profile that allows unshare and mount "
        "(e.g. docker --security-opt seccomp=unconfined), or use the landlock backend";
  } else {
    report.reason = failure;
    report.hint =
        "check the kernel's user namespace support (CONFIG_USER_NS) and any LSM "
        "policy; the landlock backend works without user namespaces";
  }
}

void explain_container_limits(bool empty_proc, bool fixed_hostname, ProbeReport &report) {
  std::string warning = "degraded:";
  if (empty_proc) {
    warning +=
        " the sandbox gets an empty /proc: this host's /proc hides some of its paths (a "
        "container masks /proc/kcore, /proc/sys and others), so the kernel refuses a fresh "
        "/proc in a user namespace, and the host's own would show its other processes; a "
        "plugin that reads /proc (its /proc/self, /dev/fd) fails";
    report.hint =
        "give the container an unmasked /proc (Kubernetes: procMount: Unmasked with "
        "hostUsers: false; podman: --security-opt unmask=/proc/*; docker: --security-opt "
        "systempaths=unconfined), or choose the landlock backend, which grants a plugin its "
        "own /proc/<pid> but no namespaces";
  }
  if (fixed_hostname) {
    warning += std::string(empty_proc ? ";" : "") +
               " the sandbox keeps this host's name: a seccomp filter on this process (a "
               "container's profile) refuses sethostname";
  }
  report.warning = warning;
}

ProbeReport probe_user_namespaces() {
  ProbeReport report;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    report.reason = std::string("probe: pipe: ") + std::strerror(errno);
    return report;
  }
  // Prepared before the fork: the child of a multi-threaded host may only make system
  // calls, no allocation.
  const std::string uid_map = std::to_string(::getuid()) + " " + std::to_string(::getuid()) + " 1";
  const std::string gid_map = std::to_string(::getgid()) + " " + std::to_string(::getgid()) + " 1";
  pid_t child = ::fork();
  if (child < 0) {
    report.reason = std::string("probe: fork: ") + std::strerror(errno);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return report;
  }
  if (child == 0) {
    // Reports errno of the first step that fails; 0 when every one worked.
    auto write_file = [](const char *path, const char *text, size_t size) {
      int fd = ::open(path, O_WRONLY | O_CLOEXEC);
      if (fd < 0) return errno;
      int result = ::write(fd, text, size) == static_cast<ssize_t>(size) ? 0 : errno;
      ::close(fd);
      return result;
    };
    int result = 0;
    // Network and ipc namespaces are left out: they cost most of the probe's time (a network
    // namespace alone is ~0.4 ms here, docs/benchmarks.md) and the settings that refuse
    // sandboxes (user namespace limits, AppArmor, container seccomp) refuse the user
    // namespace already.
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS) != 0) {
      result = errno;
    }
    if (result == 0) result = write_file("/proc/self/setgroups", "deny", 4);
    if (result == 0) result = write_file("/proc/self/uid_map", uid_map.data(), uid_map.size());
    if (result == 0) result = write_file("/proc/self/gid_map", gid_map.data(), gid_map.size());
    if (result == 0 && ::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, nullptr) != 0) {
      result = errno;
    }
    const int hostname_result = result == 0 && ::sethostname("sandbox", 7) != 0 ? errno : 0;
    // The sandbox's /proc, mounted as its init mounts it: by pid 1 of the new pid namespace.
    int proc_result = 0;
    if (result == 0) {
      const pid_t init = ::fork();
      if (init == 0) {
        const int mounted =
            ::mount("proc", "/tmp", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "subset=pid") == 0
                ? 0
                : errno;
        ::_exit(mounted);
      }
      int status = 0;
      proc_result = init < 0                                                   ? errno
                    : ::waitpid(init, &status, 0) == init && WIFEXITED(status) ? WEXITSTATUS(status)
                                                                               : ECHILD;
    }
    const int results[3] = {result, proc_result, hostname_result};
    ssize_t ignored = ::write(pipe_fds[1], results, sizeof results);
    (void)ignored;
    ::_exit(0);
  }
  ::close(pipe_fds[1]);

  // The child writes its result and exits; bounded, so one stuck in the kernel cannot hold
  // the probe.
  int result = ETIMEDOUT;
  int proc_result = 0;
  int hostname_result = 0;
  pollfd ready{pipe_fds[0], POLLIN, 0};
  if (::poll(&ready, 1, 1000) == 1) {
    int reported[3] = {};
    const bool whole = ::read(pipe_fds[0], reported, sizeof reported) == sizeof reported;
    result = whole ? reported[0] : -1;
    proc_result = whole ? reported[1] : 0;
    hostname_result = whole ? reported[2] : 0;
  }
  ::close(pipe_fds[0]);
  if (result == ETIMEDOUT) ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);

  if (result == 0 && (proc_result == EPERM || hostname_result == EPERM)) {
    report.available = true;
    explain_container_limits(proc_result == EPERM, hostname_result == EPERM, report);
  } else if (result == 0 && proc_result != 0) {
    report.reason =
        std::string("mounting the sandbox's /proc failed: ") + std::strerror(proc_result);
    report.hint = "check the LSM policy (AppArmor, SELinux) on mounts in user namespaces";
  } else if (result == 0) {
    report.available = true;
  } else if (result == ETIMEDOUT) {
    report.reason = "creating a user namespace did not finish within a second";
  } else if (result < 0) {
    report.reason =
        "the probe's child died before it could report (killed by a seccomp filter "
        "or a security module?)";
  } else {
    explain_refusal(result, "/proc", report);
  }
  return report;
}

}  // namespace sandbox_host::namespaces
