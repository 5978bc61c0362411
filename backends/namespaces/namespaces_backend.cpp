// The namespaces backend (mode "namespaces"): user, mount, pid, ipc, uts and cgroup
// namespaces (and net for networks "none" and "proxied"), a deny-by-default mount tree, no
// capabilities, no_new_privs and the default seccomp filter. Under an agent policy
// (Spec::view) the tree is the policy's view of the host instead (policy_view_mounts.cpp),
// and the command cannot open a unix socket either.
//
// Stage 1 runs in the re-executed host binary (S) and makes three processes:
//   S    enters the new namespaces, forks I, and waits for it outside the sandbox;
//   I    pid 1 of the new pid namespace: builds the mount tree, hardens itself, forks P,
//        reaps and passes signals on, exits with P's status; in a prepared sandbox it
//        builds the Spec-independent part of the tree first, then waits for its launch;
//        for network "proxied" it also relays 127.0.0.1:<port> to the egress proxy, on a
//        thread of its own (proxy_forwarder.cpp);
//   P    the plugin: own session, cwd TmpDir (under a view: the launcher's, where the view
//        shows it), exec.
// A failure in any of them is one "clawpatrol-sandbox: <step>: <reason>" line and exit 87.
#include "loopback.hpp"
#include "mount_tree.hpp"
#include "policy_view_mounts.hpp"
#include "proxied_network.hpp"
#include "proxy_forwarder.hpp"
#include "supervisor.hpp"
#include "user_namespace.hpp"
#include "userns_probe.hpp"

#include <sandbox_host/backends/hardening.hpp>
#include <sandbox_host/backends/landlock_version.hpp>
#include <sandbox_host/backends/resource_limits.hpp>
#include <sandbox_host/backends/seccomp_channel.hpp>
#include <sandbox_host/backends/setup_error.hpp>
#include <sandbox_host/module.hpp>
#include <sandbox_host/stage1_failure.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace sandbox_host::namespaces {
namespace {

using backends::throw_errno;

// What the plugin's process needs, made before it starts: it is vfork'ed, so until its exec
// it runs on the init's memory and may only make system calls.
struct PluginStart {
  PluginStart(const Spec &spec, std::string work_dir)
      : path(spec.binary_path),
        work_dir(std::move(work_dir)),
        shown_path(one_line(spec.binary_path)),
        shown_chdir("chdir " + one_line(this->work_dir)),
        refuse_unix_sockets(!spec.view.empty()),
        rlimits(spec),
        args(spec.args),
        env(spec.env) {
    argv.push_back(path.data());
    for (auto &arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    for (auto &entry : env) envp.push_back(entry.data());
    envp.push_back(nullptr);
  }
  PluginStart(const PluginStart &) = delete;
  PluginStart &operator=(const PluginStart &) = delete;
  static std::string one_line(std::string text) {
    for (char &c : text) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    return text;
  }

  std::string path, work_dir, shown_path, shown_chdir;
  bool refuse_unix_sockets;  // an agent policy's command: no socket(AF_UNIX)
  // The plugin's alone: on the init they would bound its relay's connections and threads.
  backends::PluginRlimits rlimits;
  std::vector<std::string> args;
  std::vector<char *> argv;  // points into path and args
  // The plugin's environment, for its execve alone: the init keeps sandbox-host's.
  std::vector<std::string> env;
  std::vector<char *> envp;  // points into env
};

// exit_stage1_failure()'s line without allocating: "<prefix><step>: <what>: <error>".
[[noreturn]] void fail_before_exec(const char *step, const std::string &what, int error) {
  auto part = [](const void *data, size_t size) { return iovec{const_cast<void *>(data), size}; };
  const char *reason = ::strerrordesc_np(error);
  if (reason == nullptr) reason = "unknown error";
  const iovec parts[] = {part(kStage1ErrorPrefix.data(), kStage1ErrorPrefix.size()),
                         part(step, std::strlen(step)),
                         part(": ", 2),
                         part(what.data(), what.size()),
                         part(": ", 2),
                         part(reason, std::strlen(reason)),
                         part("\n", 1)};
  ssize_t ignored = ::writev(STDERR_FILENO, parts, std::size(parts));
  (void)ignored;
  ::_exit(kStage1ExitCode);
}

// The unix socket filter is the plugin's alone: the init's relay to the egress proxy opens a
// unix socket for every connection. It allocates only to throw, and this process ends then at
// once, while the init, single-threaded until the exec, waits.
void load_unix_socket_filter() {
  try {
    backends::install_unix_socket_filter();
  } catch (const std::exception &e) {
    const std::string line = std::string(kStage1ErrorPrefix) + e.what() + "\n";
    ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
    (void)ignored;
    ::_exit(kStage1ExitCode);
  }
}

// The plugin's process, between vfork and exec.
[[noreturn]] void exec_plugin(const PluginStart &start) {
  sigset_t none;
  sigemptyset(&none);
  if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0)
    fail_before_exec("signals", "sigprocmask", errno);
  // Own session: no controlling terminal, so TIOCSTI cannot reach the host's.
  if (::setsid() < 0) fail_before_exec("session", "setsid", errno);
  if (::chdir(start.work_dir.c_str()) != 0) fail_before_exec("exec", start.shown_chdir, errno);
  if (const int refused = start.rlimits.apply(); refused >= 0) {
    fail_before_exec("limits", start.rlimits.shown(refused), errno);
  }
  if (start.refuse_unix_sockets) load_unix_socket_filter();
  ::execve(start.path.c_str(), start.argv.data(), start.envp.data());
  fail_before_exec("exec", start.shown_path, errno);
}

// vfork: no copy of the init's page tables on the launch path. In a function of its own, so
// that none of the init's variables lives in the frame the child borrows.
pid_t start_plugin(const PluginStart &start) {
  const pid_t plugin = ::vfork();
  if (plugin < 0) exit_stage1_failure(std::string("init: vfork: ") + std::strerror(errno));
  if (plugin == 0) exec_plugin(start);
  return plugin;
}

// The relay to the egress proxy runs beside the init's own work (reaping, passing signals
// on), never in its way, on a thread that ends with the init. The plugin runs already, so
// nothing set here is the plugin's.
void start_relay(UniqueFd listener, std::string socket_path) noexcept {
  auto report = [](const std::string &what) {
    const std::string line = std::string(kStage1ErrorPrefix) + what +
                             "; the plugin's way to the egress proxy is closed\n";
    ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
    (void)ignored;
  };
  // A client or proxy that went away fails its connection, never the init.
  ::signal(SIGPIPE, SIG_IGN);
  try {
    std::thread([listener = std::move(listener), socket_path = std::move(socket_path),
                 report]() mutable {
      try {
        relay_forever(std::move(listener), socket_path);
      } catch (const std::exception &e) {
        report(e.what());
      }
    }).detach();
  } catch (const std::exception &e) {
    report(std::string("proxy: start the relay: ") + e.what());
  }
}

// Which tree a sandbox builds before its Spec is known.
enum class Tree {
  plugin,  // the deny-by-default one: a plugin's launch, or any prepared sandbox's
  view,    // none: the launch, known already, has an agent policy's view to build
};

// The launcher's working directory as the host has it; "" where it has none any more.
std::string launcher_directory() {
  std::string cwd(PATH_MAX, '\0');
  if (::getcwd(cwd.data(), cwd.size()) == nullptr) return "";
  cwd.resize(std::strlen(cwd.c_str()));
  return cwd;
}

// Where a launch comes from: the Spec S was started with, or, for a prepared sandbox, the
// one the host hands over once the rest is set up; the latter's host also takes the plugin's
// status straight from the init, before S and the sandbox have exited.
struct KnownLaunch {
  const Spec &spec;
  Spec take() const { return spec; }
  int status_descriptor() const { return -1; }
  void report_status(int) const {}
};
struct PreparedLaunch {
  LaunchSource &source;
  Spec take() const { return source.await_launch(); }
  int status_descriptor() const { return source.status_descriptor(); }
  void report_status(int status) const { source.report_status(status); }
};

// pid 1 of the sandbox. parent_pidfd refers to S, which must still be there once this
// process has asked to die with it.
template <class Launch>
[[noreturn]] void run_init(Network network, Tree tree, const std::vector<MountEntry> &system,
                           HostMounts host_mounts, int parent_pidfd, int status_fd,
                           backends::SeccompChannel &seccomp, const Launch &launch) {
  std::optional<PluginStart> start;
  UniqueFd relay_listener;  // network proxied: 127.0.0.1:<port>, relayed to relay_socket
  std::string relay_socket;
  try {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) throw_errno("parent", "PR_SET_PDEATHSIG");
    pollfd parent{parent_pidfd, POLLIN, 0};
    if (::poll(&parent, 1, 0) != 0) throw backends::SetupError("parent", "stage 1 is gone");
    ::close(parent_pidfd);

    // Before the mounts hide it: a command under a view may start there.
    const std::string cwd = launcher_directory();
    leave_host_root(host_mounts);
    if (tree == Tree::plugin) build_plugin_root(system);
    if (network != Network::outbound) bring_up_loopback();
    // A container's seccomp profile refuses it without CAP_SYS_ADMIN in the container's own
    // user namespace (podman's and Docker's do): the sandbox then keeps the container's
    // name, as probe says.
    if (::sethostname("sandbox", 7) != 0 && errno != EPERM) throw_errno("uts", "sethostname");
    // Needs no Spec, and dropping the bounding set is one call per capability.
    backends::drop_bounding_set();
    const Spec spec = launch.take();
    if (spec.network == Network::proxied) {
      require_proxy_socket(spec);
      // Before the capabilities go: a port below 1024 needs one, of this network namespace.
      relay_listener = listen_on_loopback(spec.proxy_port);
      relay_socket = spec.proxy_socket;
    }
    const std::vector<MountEntry> grants = plan_spec_mounts(spec);
    std::string root(kPluginRoot);
    if (!spec.view.empty()) {
      root = kViewRoot;
      build_view_root(spec.view, grants);
    }
    bound_private_filesystems(root, spec.limits);
    add_mounts(root, grants);
    finish_mount_tree(root);
    start.emplace(spec, spec.view.empty() ? spec.tmp_dir : command_directory(spec, cwd));

    // Its memory still holds the control variables it was started with (unsetenv does not
    // wipe them): the plugin, same uid, may read neither /proc/1/environ nor /proc/1/mem.
    if (::prctl(PR_SET_DUMPABLE, 0) != 0) throw_errno("init", "PR_SET_DUMPABLE");
    std::vector<int> kept{status_fd};
    if (relay_listener) kept.push_back(relay_listener.get());
    if (launch.status_descriptor() >= 0) kept.push_back(launch.status_descriptor());
    if (seccomp.fd() >= 0) kept.push_back(seccomp.fd());
    backends::close_descriptors_except(kept);
    backends::drop_all_capabilities();
    backends::set_no_new_privs();
    backends::install_seccomp_filter(backends::Namespaces::all, seccomp);
  } catch (const std::exception &e) {
    exit_stage1_failure(e.what());
  }
  const pid_t plugin = start_plugin(*start);
  // Connections the plugin makes before this wait in the listener's queue.
  if (relay_listener) start_relay(std::move(relay_listener), std::move(relay_socket));
  const int status = supervise(plugin);
  launch.report_status(status);
  report_and_wait_for_the_end(status_fd, status);
}

// Stage 1 proper (S): enters the namespaces, forks init and waits for its report.
template <class Launch>
[[noreturn]] void contain(Network network, Tree tree, HostMounts host_mounts,
                          const Launch &launch) {
  // Planned before any namespace exists: paths resolve as the host sees them.
  const std::vector<MountEntry> system =
      tree == Tree::plugin ? plan_system_mounts() : std::vector<MountEntry>{};
  // The init loads the filter and hands its listener over; S keeps no copy.
  backends::SeccompChannel seccomp = backends::SeccompChannel::take_from_environment();
  int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
  if (network != Network::outbound) flags |= CLONE_NEWNET;
  enter_user_namespace(flags, ::getuid(), ::getgid());

  int self = static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0));
  if (self < 0) throw_errno("parent", "pidfd_open");
  int status[2];
  if (::pipe2(status, O_CLOEXEC) != 0) throw_errno("init", "pipe");
  const sigset_t signals = supervised_signals();
  if (::sigprocmask(SIG_BLOCK, &signals, nullptr) != 0) throw_errno("signals", "sigprocmask");
  pid_t init = ::fork();
  if (init < 0) throw_errno("pid namespace", "fork the sandbox's init");
  if (init == 0) {
    ::close(status[0]);
    run_init(network, tree, system, host_mounts, self, status[1], seccomp, launch);
  }
  seccomp.close();
  ::close(self);
  ::close(status[1]);
  ::_exit(await_report(init, status[0]));
}

// Whether path is dir or lies below it.
bool covers(const std::string &path, const std::string &dir) {
  return path == dir || path.rfind(dir + "/", 0) == 0;
}

class NamespacesBackend final : public Backend {
 public:
  ProbeReport probe() override {
    ProbeReport report = probe_user_namespaces();
    report.landlock_abi = landlock::kernel_abi();
    report.bounds = backends::confined_plugin_bounds(backends::ProcessCount::user_namespace);
    report.bounds.push_back({"tmp_size", true, "size= of the sandbox's own tmpfs /tmp"});
    report.bounds.push_back(
        {"tmp_inodes", true, "nr_inodes= of the sandbox's own tmpfs /tmp and /dev/shm"});
    report.bounds.push_back({"shm_size", true, "size= of the sandbox's own tmpfs /dev/shm"});
    return report;
  }

  void build_command(const Spec &spec, CommandBuilder &command) override {
    for (const auto &path : spec.read_paths) {
      if (path == "/" || covers(path, "/proc") || covers(path, "/dev")) {
        throw std::invalid_argument(
            "read path " + path +
            ": the sandbox builds its own /, /proc and /dev; grant the directories the "
            "plugin needs instead");
      }
    }
    check_view(spec.view);
    if (spec.network == Network::proxied) {
      for (const auto &[name, value] : proxy_environment(spec)) command.env(name, value);
    }
    command.reexec_stage1();
  }

  void stage1(const Spec &spec) override {
    contain(spec.network, spec.view.empty() ? Tree::plugin : Tree::view, HostMounts::ignore,
            KnownLaunch{spec});
  }

  void stage1_prepared(Network network, LaunchSource &source) override {
    contain(network, Tree::plugin, HostMounts::follow, PreparedLaunch{source});
  }
};

}  // namespace
}  // namespace sandbox_host::namespaces

SANDBOX_HOST_BACKEND_MODULE(sandbox_host::namespaces::NamespacesBackend, "namespaces", "0.1.0",
                            "user, mount, pid, net, ipc, uts and cgroup namespaces with a "
                            "deny-by-default mount tree")
