#include "userns_probe.hpp"

#include "userns_refusal.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace sandbox_host::namespaces {
namespace {

// The steps of the probe's child that can fail, in order.
enum class ProbeStep : int { none, user_namespace, id_maps, mount };

// What the probe's child writes to its parent: a plain struct, written whole by one write.
struct ChildReport {
  ProbeStep failed = ProbeStep::none;
  int error = 0;           // of the failed step
  int proc_error = 0;      // mounting the sandbox's /proc from pid 1 of the new pid namespace
  int hostname_error = 0;  // sethostname in the new uts namespace
};

// What the probe's child needs, made before the vfork.
struct ProbeInputs {
  const char *uid_map;
  std::size_t uid_map_size;
  const char *gid_map;
  std::size_t gid_map_size;
  bool try_proc;
  int report_fd;
};

int write_file(const char *path, const char *text, std::size_t size) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int result = ::write(fd, text, size) == static_cast<ssize_t>(size) ? 0 : errno;
  ::close(fd);
  return result;
}

// The probe's child: the steps the sandbox's init meets, each a system call; it reports the
// first that fails and its errno, and what the init would meet beyond them. It runs in the
// host's memory (vfork) and writes nothing of it: its report goes to the pipe.
[[noreturn]] void run_probe_child(const ProbeInputs &in) {
  // Bounded: a child stuck in the kernel for a second ends by its alarm, and the host reads
  // that as no answer.
  struct sigaction fallback = {};
  fallback.sa_handler = SIG_DFL;
  ::sigaction(SIGALRM, &fallback, nullptr);
  sigset_t alarm_only;
  sigemptyset(&alarm_only);
  sigaddset(&alarm_only, SIGALRM);
  ::sigprocmask(SIG_UNBLOCK, &alarm_only, nullptr);
  ::alarm(1);
  ChildReport report;
  // Network and ipc namespaces are left out: they cost most of the probe's time (a network
  // namespace alone is ~0.4 ms here, docs/benchmarks.md) and the settings that refuse
  // sandboxes (user namespace limits, AppArmor, container seccomp) refuse the user
  // namespace already.
  int error = 0;
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS) != 0) {
    report.failed = ProbeStep::user_namespace;
    report.error = errno;
  } else if ((error = write_file("/proc/self/setgroups", "deny", 4)) != 0 ||
             (error = write_file("/proc/self/uid_map", in.uid_map, in.uid_map_size)) != 0 ||
             (error = write_file("/proc/self/gid_map", in.gid_map, in.gid_map_size)) != 0) {
    report.failed = ProbeStep::id_maps;
    report.error = error;
  } else if (::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, nullptr) != 0) {
    report.failed = ProbeStep::mount;
    report.error = errno;
  } else {
    report.hostname_error = ::sethostname("sandbox", 7) != 0 ? errno : 0;
    if (in.try_proc) {
      // The sandbox's /proc, mounted as its init mounts it: by pid 1 of the new pid
      // namespace (a fork: it needs a memory of its own to outlive nothing but itself).
      const pid_t init = ::fork();
      if (init == 0) {
        const int mounted =
            ::mount("proc", "/tmp", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "subset=pid") == 0
                ? 0
                : errno;
        ::_exit(mounted);
      }
      int status = 0;
      report.proc_error = init < 0 ? errno
                          : ::waitpid(init, &status, 0) == init && WIFEXITED(status)
                              ? WEXITSTATUS(status)
                              : ECHILD;
    }
  }
  ssize_t ignored = ::write(in.report_fd, &report, sizeof report);
  (void)ignored;
  ::_exit(0);
}

// vfork: no copy of the host's page tables, which made the probe cost a one-shot launch
// about a third of a millisecond and the host copy-on-write faults after it. In a function
// of its own, so that none of the caller's variables lives in the frame the child borrows.
__attribute__((noinline)) pid_t start_probe_child(const ProbeInputs &inputs) {
  const pid_t child = ::vfork();
  if (child == 0) run_probe_child(inputs);
  return child;
}

}  // namespace

void explain_masked_proc(ProbeReport &report) {
  report.reason =
      "mounting the sandbox's /proc failed: Operation not permitted: this host's /proc hides "
      "some of its paths (a container masks /proc/kcore, /proc/sys and others), and the kernel "
      "refuses a user namespace a /proc that shows more; the host's own /proc would show its "
      "other processes, and an empty one fails every plugin that reads /proc";
  report.hint =
      "give the container an unmasked /proc (Kubernetes: procMount: Unmasked with hostUsers: "
      "false; podman: --security-opt unmask=/proc/*; docker: --security-opt "
      "systempaths=unconfined); until then the landlock backend confines plugins here";
}

void explain_kept_hostname(ProbeReport &report) {
  // In the form of sandbox_host/coverage_gaps.hpp, so that probe lists it as a gap.
  report.warning =
      "degraded: a seccomp filter on this process (a container's profile) refuses "
      "sethostname; not covered: the sandbox keeps this host's name (close: allow sethostname "
      "in the container's seccomp profile, as deploy/kubernetes/seccomp does)";
}

bool fresh_proc_certain(const std::string &mountinfo) {
  std::istringstream lines(mountinfo);
  bool proc_seen = false, fits = false;
  for (std::string line; std::getline(lines, line);) {
    // "36 25 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:13 - proc proc rw"
    std::istringstream fields(line);
    std::string id, parent, device, root, mount_point, options;
    if (!(fields >> id >> parent >> device >> root >> mount_point >> options)) continue;
    if (mount_point == "/proc") {
      // The one mounted last is the one seen; a new procfs must keep what it locks: read-
      // write, and the access-time mode the init's mount gets (relatime, the default).
      proc_seen = true;
      const std::string with_commas = "," + options + ",";
      fits = with_commas.find(",rw,") != std::string::npos &&
             with_commas.find(",relatime,") != std::string::npos;
    } else if (mount_point.starts_with("/proc/") && mount_point != "/proc/sys/fs/binfmt_misc") {
      // binfmt_misc is mounted on a directory that is always empty, which hides nothing.
      return false;
    }
  }
  return proc_seen && fits;
}

ProbeReport probe_user_namespaces() {
  ProbeReport report;
  // The fresh /proc is tried (from pid 1 of a new pid namespace, ~0.2-0.5 ms more) only
  // where the host's is not certain to allow it.
  std::string mountinfo;
  {
    std::ifstream in("/proc/self/mountinfo");
    mountinfo.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const bool try_proc = !fresh_proc_certain(mountinfo);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    report.reason = std::string("probe: pipe: ") + std::strerror(errno);
    return report;
  }
  // Prepared before the vfork: the child may only make system calls, no allocation.
  const std::string uid_map = std::to_string(::getuid()) + " " + std::to_string(::getuid()) + " 1";
  const std::string gid_map = std::to_string(::getgid()) + " " + std::to_string(::getgid()) + " 1";
  const ProbeInputs inputs{uid_map.c_str(), uid_map.size(), gid_map.c_str(),
                           gid_map.size(),  try_proc,       pipe_fds[1]};
  // Blocked across the vfork: no handler of the host's runs in the child.
  sigset_t all, previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  const pid_t child = start_probe_child(inputs);
  const int vfork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ::close(pipe_fds[1]);
  if (child < 0) {
    report.reason = std::string("probe: vfork: ") + std::strerror(vfork_error);
    ::close(pipe_fds[0]);
    return report;
  }
  // The child has ended when vfork returns here (it never executes anything): its report
  // is in the pipe, or it was killed, by its own alarm if it took over a second.
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  ChildReport child_report;
  const bool reported =
      ::read(pipe_fds[0], &child_report, sizeof child_report) == sizeof child_report;
  ::close(pipe_fds[0]);
  const bool answered = !(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM);

  if (!answered) {
    report.reason = "creating a user namespace did not finish within a second";
  } else if (!reported) {
    report.reason =
        "the probe's child died before it could report (killed by a seccomp filter "
        "or a security module?)";
  } else if (child_report.failed == ProbeStep::user_namespace) {
    explain_refusal(child_report.error, "/", report);
  } else if (child_report.failed == ProbeStep::id_maps) {
    report.reason = std::string("writing the new user namespace's uid and gid maps failed: ") +
                    std::strerror(child_report.error);
    // The kernel asks CAP_SETFCAP of whoever maps uid 0 (since Linux 5.12).
    report.hint = ::getuid() == 0 && child_report.error == EPERM
                      ? "root maps itself only with CAP_SETFCAP, which this process lacks (a "
                        "container that drops every capability): run sandbox-host as another "
                        "user, or keep CAP_SETFCAP"
                      : "check the LSM policy (AppArmor, SELinux) on /proc/<pid>/uid_map";
  } else if (child_report.failed == ProbeStep::mount) {
    report.reason = std::string("mounting a tmpfs in the new mount namespace failed: ") +
                    std::strerror(child_report.error) +
                    " (a security module refuses it, as AppArmor's docker-default profile "
                    "refuses mounts)";
    report.hint =
        "run the container with an AppArmor profile that allows mount in a user namespace "
        "(Kubernetes: appArmorProfile, docker/podman: --security-opt apparmor=...), or use "
        "the landlock backend";
  } else if (child_report.proc_error == EPERM) {
    explain_masked_proc(report);
  } else if (child_report.proc_error != 0) {
    report.reason = std::string("mounting the sandbox's /proc failed: ") +
                    std::strerror(child_report.proc_error);
    report.hint = "check the LSM policy (AppArmor, SELinux) on mounts in user namespaces";
  } else {
    report.available = true;
    if (child_report.hostname_error == EPERM) explain_kept_hostname(report);
  }
  return report;
}

}  // namespace sandbox_host::namespaces
