// The namespaces backend (seed 004's ModeNamespaces): user, mount, pid, ipc, uts and cgroup
// namespaces (and net for network "none"), a deny-by-default mount tree, no capabilities,
// no_new_privs and the default seccomp filter.
//
// Stage 1 runs in the re-executed host binary (S) and makes three processes:
//   S    enters the new namespaces, forks I, and waits for it outside the sandbox;
//   I    pid 1 of the new pid namespace: builds the mount tree, hardens itself, forks P,
//        reaps and passes signals on, exits with P's status;
//   P    the plugin: own session, cwd TmpDir, exec.
// A failure in any of them is one "clawpatrol-sandbox: <step>: <reason>" line and exit 87.
#include "loopback.hpp"
#include "mount_tree.hpp"
#include "supervisor.hpp"
#include "user_namespace.hpp"
#include "userns_probe.hpp"

#include <sandbox_host/backends/hardening.hpp>
#include <sandbox_host/backends/setup_error.hpp>
#include <sandbox_host/module.hpp>
#include <sandbox_host/stage1_failure.hpp>

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

extern char **environ;

namespace sandbox_host::namespaces {
namespace {

using backends::throw_errno;

[[noreturn]] void run_plugin(const Spec &spec) {
  try {
    sigset_t none;
    sigemptyset(&none);
    if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0) throw_errno("signals", "sigprocmask");
    backends::new_session();
    if (::chdir(spec.tmp_dir.c_str()) != 0) throw_errno("exec", "chdir " + spec.tmp_dir);
    std::vector<char *> argv{const_cast<char *>(spec.binary_path.c_str())};
    for (const auto &arg : spec.args) argv.push_back(const_cast<char *>(arg.c_str()));
    argv.push_back(nullptr);
    ::execve(spec.binary_path.c_str(), argv.data(), environ);
    throw_errno("exec", spec.binary_path);
  } catch (const std::exception &e) {
    exit_stage1_failure(e.what());
  }
}

// pid 1 of the sandbox. parent_pidfd refers to S, which must still be there once this
// process has asked to die with it.
[[noreturn]] void run_init(const Spec &spec, const std::vector<MountEntry> &plan,
                           int parent_pidfd) {
  try {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) throw_errno("parent", "PR_SET_PDEATHSIG");
    pollfd parent{parent_pidfd, POLLIN, 0};
    if (::poll(&parent, 1, 0) != 0) throw backends::SetupError("parent", "stage 1 is gone");
    ::close(parent_pidfd);

    build_mount_tree(plan);
    if (spec.network == Network::none) bring_up_loopback();
    if (::sethostname("sandbox", 7) != 0) throw_errno("uts", "sethostname");

    // Its memory still holds the control variables it was started with (unsetenv does not
    // wipe them): the plugin, same uid, may read neither /proc/1/environ nor /proc/1/mem.
    if (::prctl(PR_SET_DUMPABLE, 0) != 0) throw_errno("init", "PR_SET_DUMPABLE");
    backends::close_descriptors_above_stderr();
    backends::drop_all_capabilities();
    backends::set_no_new_privs();
    backends::install_seccomp_filter();
  } catch (const std::exception &e) {
    exit_stage1_failure(e.what());
  }
  pid_t plugin = ::fork();
  if (plugin < 0) exit_stage1_failure(std::string("init: fork: ") + std::strerror(errno));
  if (plugin == 0) run_plugin(spec);
  ::_exit(supervise(plugin));
}

// Whether path is dir or lies below it.
bool covers(const std::string &path, const std::string &dir) {
  return path == dir || path.rfind(dir + "/", 0) == 0;
}

class NamespacesBackend final : public Backend {
 public:
  ProbeReport probe() override { return probe_user_namespaces(); }

  void build_command(const Spec &spec, CommandBuilder &command) override {
    for (const auto &path : spec.read_paths) {
      if (path == "/" || covers(path, "/proc") || covers(path, "/dev")) {
        throw std::invalid_argument(
            "read path " + path +
            ": the sandbox builds its own /, /proc and /dev; grant the directories the "
            "plugin needs instead");
      }
    }
    command.reexec_stage1();
  }

  void stage1(const Spec &spec) override {
    // Planned before any namespace exists: paths resolve as the host sees them.
    const std::vector<MountEntry> plan = plan_mount_tree(spec);
    int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
    if (spec.network == Network::none) flags |= CLONE_NEWNET;
    enter_user_namespace(flags, ::getuid(), ::getgid());

    int self = static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0));
    if (self < 0) throw_errno("parent", "pidfd_open");
    const sigset_t signals = supervised_signals();
    if (::sigprocmask(SIG_BLOCK, &signals, nullptr) != 0) throw_errno("signals", "sigprocmask");
    pid_t init = ::fork();
    if (init < 0) throw_errno("pid namespace", "fork the sandbox's init");
    if (init == 0) run_init(spec, plan, self);
    ::close(self);
    ::_exit(supervise(init));
  }
};

}  // namespace
}  // namespace sandbox_host::namespaces

SANDBOX_HOST_BACKEND_MODULE(sandbox_host::namespaces::NamespacesBackend, "namespaces", "0.1.0",
                            "user, mount, pid, net, ipc, uts and cgroup namespaces with a "
                            "deny-by-default mount tree")
