// The escape corpus of the namespaces backend. Every test launches the real
// `sandbox-host run`, forced to the namespaces backend, from a hostile environment, as root
// and as nobody, each both ways a sandbox is made (set up for a known Spec, and prepared
// before its Spec as a long-running host's SandboxPool does: `run --prepared`), and has
// escape_plugin attempt one thing: what a plugin must not
// do is DENIED, what it may do is ALLOWED, and every check would fail were its protection
// missing (the files, sockets and processes it aims at are ones the launching user could
// reach on the host).
#include "escape_harness.hpp"
#include "fixtures.hpp"
#include "process.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

namespace sandbox_host {
namespace {

using namespace test::escape;

namespace fs = std::filesystem;
using test::ProcessResult;
using namespace std::chrono_literals;

class NamespacesEscape : public EscapeCorpus {
 protected:
  const char *backend() const override { return "namespaces"; }
};

// Whether sethostname is refused even in a uts namespace of this process's own, as a
// container's seccomp profile refuses it without CAP_SYS_ADMIN.
bool sethostname_refused() {
  const pid_t child = ::fork();
  if (child == 0) {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWUTS) != 0) ::_exit(2);
    ::_exit(::sethostname("x", 1) == 0 ? 0 : 1);
  }
  int status = 0;
  return child > 0 && ::waitpid(child, &status, 0) == child && WIFEXITED(status) &&
         WEXITSTATUS(status) == 1;
}

std::string this_host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// ---- files -----------------------------------------------------------------------------

TEST_P(NamespacesEscape, SecretsInTheHomeAndTheGatewayStateAreInvisible) {
  std::unique_ptr<ScopedPath> secret_holder;
  const fs::path secret = make_secret(secret_holder);
  ScopedPath state_dir("/var/lib/sandbox-host-test-" + random_suffix());
  fs::create_directory(state_dir.path());
  fs::permissions(state_dir.path(), kWorldReadableDir);
  const fs::path state = state_dir.path() / "state.db";
  write_file(state, "gateway-state\n", kWorldReadable);

  EXPECT_TRUE(DeniedWith(attempt({"read", secret.string()}), "ENOENT"));
  EXPECT_TRUE(DeniedWith(attempt({"list", secret.parent_path().string()}), "ENOENT"));
  EXPECT_TRUE(DeniedWith(attempt({"read", state.string()}), "ENOENT"));
  EXPECT_TRUE(DeniedWith(attempt({"list", "/var/lib"}), "ENOENT"));
  EXPECT_TRUE(DeniedWith(attempt({"list", "/root"}), "ENOENT"));
  // Only the non-secret part of /etc is there.
  EXPECT_TRUE(DeniedWith(attempt({"read", "/etc/shadow"}), "ENOENT"));
  EXPECT_TRUE(Allowed(attempt({"read", "/etc/passwd"})));
}

TEST_P(NamespacesEscape, WritesOutsideSocketDirAndTmpDirAreRefused) {
  const std::string name = "sandbox-host-escape-" + random_suffix();
  for (const fs::path &target : {fs::path("/" + name), fs::path("/usr/" + name),
                                 fs::path("/etc/" + name), fs::path("/usr/bin/" + name)}) {
    EXPECT_TRUE(DeniedWith(attempt({"write", target.string()}), "EROFS")) << target;
    EXPECT_FALSE(fs::exists(target)) << target << " appeared on the host";
    std::error_code ignored;
    fs::remove(target, ignored);
  }
  // The sandbox's /tmp is a tmpfs of its own: what the plugin writes there, beside
  // SocketDir included, stays there.
  for (const fs::path &target : {fs::path("/tmp/" + name), workspace_.dir() / name}) {
    EXPECT_TRUE(Allowed(attempt({"write", target.string()}))) << target;
    EXPECT_FALSE(fs::exists(target)) << target << " appeared on the host";
  }
}

// Outside /tmp, the directories stage 1 made to hang SocketDir on are part of the
// read-only root.
TEST_P(NamespacesEscape, WritesBesideASocketDirOutsideTmpAreRefused) {
  ScopedPath parent("/var/tmp/sandbox-host-test-" + random_suffix());
  fs::create_directory(parent.path());
  fs::permissions(parent.path(), kWorldReadableDir);
  hand_to_user(parent.path());
  fs::create_directory(parent.path() / "sock");
  hand_to_user(parent.path() / "sock");
  Launch launch;
  launch.socket_dir = (parent.path() / "sock").string();

  const fs::path beside = parent.path() / "beside";
  EXPECT_TRUE(DeniedWith(attempt({"write", beside.string()}, launch), "EROFS"));
  EXPECT_TRUE(DeniedWith(attempt({"write", "/var/tmp/beside"}, launch), "EROFS"));
  EXPECT_FALSE(fs::exists(beside));
  EXPECT_TRUE(Allowed(attempt({"write", (parent.path() / "sock/inside").string()}, launch)));
  EXPECT_TRUE(fs::exists(parent.path() / "sock/inside"));
}

TEST_P(NamespacesEscape, WritesInSocketDirAndTmpDirReachTheHostAtTheSamePath) {
  for (const fs::path &target : {socket_dir() / "from-plugin", tmp_dir() / "from-plugin"}) {
    EXPECT_TRUE(Allowed(attempt({"write", target.string()}))) << target;
    EXPECT_EQ(slurp(target), "written by escape_plugin\n") << target;
    struct stat st {};
    ASSERT_EQ(::stat(target.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, uid()) << target;
  }
}

TEST_P(NamespacesEscape, ReadPathsAndThePluginBinaryAreReadOnly) {
  test::TempFile data("data\n", "data.txt");
  hand_to_user(data.dir());
  hand_to_user(data.path());
  Launch launch;
  launch.read = {data.dir().string()};

  Attempt read = attempt({"read", data.path().string()}, launch);
  EXPECT_TRUE(Allowed(read));
  EXPECT_EQ(read.verdict, "ALLOWED data.");
  // The launching user owns both: only the read-only mount refuses.
  EXPECT_TRUE(DeniedWith(attempt({"write", data.path().string()}, launch), "EROFS"));
  EXPECT_TRUE(DeniedWith(attempt({"write", (data.dir() / "new").string()}, launch), "EROFS"));
  EXPECT_EQ(slurp(data.path()), "data\n");
  EXPECT_FALSE(fs::exists(data.dir() / "new"));

  // The plugin's own binary, owned by the launching user. A running binary refuses
  // open-for-write by itself (ETXTBSY); truncate() to its own size asks the mount.
  test::TempFile own("", "unused");
  const fs::path binary = own.dir() / "escape_plugin";
  fs::copy_file(ESCAPE_PLUGIN, binary);
  fs::permissions(binary, kWorldReadableDir);
  hand_to_user(binary);
  Attempt write_binary = to_attempt(run(binary.string(), {"write-binary"}));
  EXPECT_TRUE(Denied(write_binary));
  EXPECT_NE(write_binary.verdict.find("truncate=EROFS"), std::string::npos) << write_binary;
}

TEST_P(NamespacesEscape, SymlinksInAReadPathLeadNowhereOutsideTheSandbox) {
  std::unique_ptr<ScopedPath> secret_holder;
  const fs::path secret = make_secret(secret_holder);
  test::TempFile data("inside\n", "data.txt");
  // A sibling of the read directory, readable on the host, granted to nobody.
  test::TempFile sibling("sibling-secret\n", "secret.txt");
  const fs::path dir = data.dir() / "granted";
  fs::create_directory(dir);
  fs::rename(data.path(), dir / "data.txt");
  fs::create_symlink(secret, dir / "to-secret");
  fs::create_symlink(sibling.path(), dir / "to-sibling");
  fs::create_symlink(fs::relative(sibling.path(), dir), dir / "to-sibling-relative");
  fs::create_symlink(dir / "data.txt", dir / "to-inside");
  fs::create_symlink("data.txt", dir / "to-inside-relative");
  Launch launch;
  launch.read = {dir.string()};

  EXPECT_TRUE(DeniedWith(attempt({"read", (dir / "to-secret").string()}, launch), "ENOENT"));
  EXPECT_TRUE(DeniedWith(attempt({"read", (dir / "to-sibling").string()}, launch), "ENOENT"));
  EXPECT_TRUE(
      DeniedWith(attempt({"read", (dir / "to-sibling-relative").string()}, launch), "ENOENT"));
  Attempt inside = attempt({"read", (dir / "to-inside").string()}, launch);
  EXPECT_TRUE(Allowed(inside));
  EXPECT_EQ(inside.verdict, "ALLOWED inside.");
  EXPECT_TRUE(Allowed(attempt({"read", (dir / "to-inside-relative").string()}, launch)));
}

// ---- network ---------------------------------------------------------------------------

TEST_P(NamespacesEscape, NetworkNoneReachesNoListenerOfTheHost) {
  std::unique_ptr<Listener> tcp, unix_socket, abstract;
  const int port = listen_inet(tcp);
  ASSERT_GT(port, 0);
  test::TempFile socket_home("", "unused");
  const std::string socket_path = (socket_home.dir() / "host.sock").string();
  ASSERT_TRUE(listen_unix(unix_socket, socket_path, false));
  const std::string abstract_name = "sandbox-host-escape-" + random_suffix();
  ASSERT_TRUE(listen_unix(abstract, abstract_name, true));

  EXPECT_TRUE(
      DeniedWith(attempt({"connect-tcp", "127.0.0.1", std::to_string(port)}), "ECONNREFUSED"));
  EXPECT_TRUE(DeniedWith(attempt({"connect-unix", socket_path}), "ENOENT"));
  EXPECT_TRUE(DeniedWith(attempt({"connect-abstract", abstract_name}), "ECONNREFUSED"));
}

TEST_P(NamespacesEscape, NetworkOutboundReachesTheHostsLoopback) {
  std::unique_ptr<Listener> tcp;
  const int port = listen_inet(tcp);
  ASSERT_GT(port, 0);
  Launch launch;
  launch.network = "outbound";
  EXPECT_TRUE(Allowed(attempt({"connect-tcp", "127.0.0.1", std::to_string(port)}, launch)));
}

// ---- processes -------------------------------------------------------------------------

TEST_P(NamespacesEscape, HostProcessesAreOutOfSight) {
  const std::string me = std::to_string(::getpid());
  EXPECT_TRUE(DeniedWith(attempt({"see-pid", me}), "ENOENT"));
  EXPECT_TRUE(DeniedWith(attempt({"kill", me, "0"}), "ESRCH"));
  EXPECT_TRUE(Denied(attempt({"ptrace", me})));
  // pid 1 in there is the sandbox's init, not the host's: it neither can be traced nor
  // hands out its memory (which still holds the control variables).
  EXPECT_TRUE(Denied(attempt({"ptrace", "1"})));
  EXPECT_TRUE(DeniedWith(attempt({"read", "/proc/1/environ"}), "EACCES"));

  Attempt self = attempt({"self"});
  EXPECT_TRUE(Allowed(self));
  // Every process it can see: init and itself.
  Attempt proc = attempt({"list", "/proc"});
  ASSERT_TRUE(Allowed(proc));
  std::vector<std::string> pids;
  std::istringstream names(proc.verdict.substr(std::string("ALLOWED ").size()));
  for (std::string name; std::getline(names, name, ',');) {
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) pids.push_back(name);
  }
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<std::string>{"1", "2"})) << proc;
  expect_seccomp_records(
      {"seccomp: ptrace", "seccomp: ptrace", "seccomp: ptrace", "seccomp: ptrace"});
}

TEST_P(NamespacesEscape, AHostDescriptorWithoutCloexecDoesNotReachThePlugin) {
  std::unique_ptr<ScopedPath> secret_holder;
  const fs::path secret = make_secret(secret_holder);
  const int leak = ::open(secret.c_str(), O_RDONLY);  // no O_CLOEXEC, on purpose
  ASSERT_GE(leak, 3);
  Attempt fds = attempt({"fds"});
  ::close(leak);
  ASSERT_TRUE(Allowed(fds));
  std::map<int, std::string> seen;
  for (const auto &line : fds.extra) {
    std::istringstream in(line);
    std::string word, target;
    int fd = -1;
    in >> word >> fd >> target;
    ASSERT_EQ(word, "fd") << line;
    seen[fd] = target;
  }
  ASSERT_EQ(seen.size(), 4u) << fds;
  EXPECT_EQ(seen.count(0) + seen.count(1) + seen.count(2) + seen.count(3), 4u) << fds;
  EXPECT_EQ(seen[0], "/dev/null");
  EXPECT_TRUE(seen[3].starts_with("/proc/") && seen[3].ends_with("/fd")) << seen[3];
  for (const auto &[fd, target] : seen) EXPECT_NE(target, secret.string()) << fd;
}

TEST_P(NamespacesEscape, TheEnvironmentIsExactlyBaseEnv) {
  Attempt env = attempt({"env"});
  ASSERT_TRUE(Allowed(env));
  std::vector<std::string> variables;
  for (const auto &line : env.extra) {
    ASSERT_TRUE(line.starts_with("env ")) << line;
    variables.push_back(line.substr(4));
  }
  const std::string tmp = tmp_dir().string();
  EXPECT_EQ(variables, (std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin",
                                                 "LANG=C.UTF-8", "HOME=" + tmp, "TMPDIR=" + tmp}));
  for (const auto &variable : variables) {
    EXPECT_FALSE(variable.starts_with("CLAWPATROL_")) << variable;
    EXPECT_FALSE(variable.starts_with("AWS_")) << variable;
  }
}

// ---- privileges and the kernel's surface ------------------------------------------------

TEST_P(NamespacesEscape, NoCapabilityInAnySet) {
  Attempt caps = attempt({"caps"});
  EXPECT_TRUE(Denied(caps));
  EXPECT_TRUE(caps.verdict.starts_with("DENIED all-zero")) << caps;
}

TEST_P(NamespacesEscape, TheMountTreeIsFixed) {
  EXPECT_TRUE(DeniedWith(attempt({"mount"}), "mount=EPERM umount=EPERM"));
  expect_seccomp_records({"seccomp: mount", "seccomp: umount2"});
}

TEST_P(NamespacesEscape, NoNestedUserNamespace) {
  // clone3 answers ENOSYS so that libc falls back to clone, whose flags the filter reads.
  EXPECT_TRUE(DeniedWith(attempt({"userns"}), "unshare=EPERM clone=EPERM clone3=ENOSYS"));
  expect_seccomp_records({"seccomp: clone (CLONE_NEWUSER)", "seccomp: unshare (CLONE_NEWUSER)"});
}

TEST_P(NamespacesEscape, TheKernelKeyringIsOutOfReach) {
  EXPECT_TRUE(DeniedWith(attempt({"keyring"}), "keyctl=EPERM add_key=EPERM"));
  expect_seccomp_records({"seccomp: add_key", "seccomp: keyctl"});
}

TEST_P(NamespacesEscape, KernelAttackSurfaceIsFiltered) {
  for (const char *call : {"bpf", "perf", "userfaultfd", "setns"}) {
    EXPECT_TRUE(DeniedWith(attempt({call}), "EPERM")) << call;
  }
  expect_seccomp_records({"seccomp: bpf", "seccomp: perf_event_open", "seccomp: setns",
                          "seccomp: userfaultfd", "seccomp: userfaultfd"});
}

// A persona is inherited across execve(): ADDR_NO_RANDOMIZE would turn ASLR off, and
// READ_IMPLIES_EXEC make readable memory executable, for everything the plugin runs. The
// query must still answer (and show the persona unchanged).
TEST_P(NamespacesEscape, PersonalitiesThatWeakenItsChildrenAreRefused) {
  EXPECT_TRUE(DeniedWith(attempt({"personality"}),
                         "no_randomize=EPERM read_implies_exec=EPERM high=EPERM query=0"));
  expect_seccomp_records({kPersonalityRule, kPersonalityRule, kPersonalityRule});
}

TEST_P(NamespacesEscape, TheLdtIsOutOfReach) {
#if defined(__x86_64__)
  EXPECT_TRUE(DeniedWith(attempt({"modify-ldt"}), "EPERM"));
  expect_seccomp_records({"seccomp: modify_ldt"});
#else
  GTEST_SKIP() << "modify_ldt exists on x86 only";
#endif
}

TEST_P(NamespacesEscape, SocketDirAndTmpDirIgnoreSetuidBits) {
  for (const fs::path &dir : {socket_dir(), tmp_dir()}) {
    Attempt a = attempt({"chmod-exec-setuid", dir.string()});
    EXPECT_TRUE(Denied(a)) << dir;
    EXPECT_TRUE(a.verdict.starts_with("DENIED nosuid")) << a;
  }
  expect_seccomp_records({"seccomp: chmod (S_ISUID/S_ISGID)", "seccomp: chmod (S_ISUID/S_ISGID)"});
}

// nosuid holds inside the sandbox only: SocketDir and TmpDir are the host's directories, and
// on the host their files honour setuid bits. A plugin must not be able to leave a setuid or
// setgid program there (launched by root: a setuid-root program for whoever reaches it).
TEST_P(NamespacesEscape, NoSetuidProgramCanBeLeftOnTheHost) {
  for (const fs::path &dir : {socket_dir(), tmp_dir()}) {
    Attempt a = attempt({"plant-setuid", dir.string()});
    EXPECT_TRUE(Denied(a)) << dir;
    for (const char *name : {"setuid-chmod", "setgid-chmod", "setuid-create"}) {
      struct stat st {};
      if (::stat((dir / name).c_str(), &st) != 0) continue;
      EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID), 0u)
          << (dir / name) << " on the host: mode " << std::oct << st.st_mode << std::dec
          << ", owner " << st.st_uid;
    }
  }
  expect_seccomp_records({"seccomp: chmod (S_ISUID/S_ISGID)", "seccomp: chmod (S_ISUID/S_ISGID)",
                          "seccomp: chmod (S_ISUID/S_ISGID)", "seccomp: chmod (S_ISUID/S_ISGID)",
                          "seccomp: openat (O_CREAT, S_ISUID/S_ISGID)",
                          "seccomp: openat (O_CREAT, S_ISUID/S_ISGID)"});
}

// Host-wide kernel settings: the sandbox's /proc must not let the plugin change them. Each
// attempt writes the current value back, so a success changes nothing but proves the
// plugin could have written anything (kernel.core_pattern = "|<TmpDir>/x" runs x as the
// host's root, with every capability, outside every namespace, at the next crash).
TEST_P(NamespacesEscape, HostWideKernelSettingsCannotBeChanged) {
  EXPECT_TRUE(Denied(attempt({"sysctl-rewrite", "/proc/sys/kernel/core_pattern"})));
  EXPECT_TRUE(Denied(attempt({"sysctl-rewrite", "/proc/sys/vm/overcommit_memory"})));
  Launch outbound;
  outbound.network = "outbound";
  // With outbound, the network namespace is the host's own.
  EXPECT_TRUE(
      Denied(attempt({"sysctl-rewrite", "/proc/sys/net/ipv4/ip_local_port_range"}, outbound)));
}

// ---- the terminal ----------------------------------------------------------------------

TEST_P(NamespacesEscape, NoInputCanBePushedIntoATerminal) {
  expect_no_terminal_input();
  expect_seccomp_records({"seccomp: ioctl (TIOCSTI)", "seccomp: ioctl (TIOCSTI)"});
}

// ---- lifetime --------------------------------------------------------------------------

TEST_P(NamespacesEscape, KillingTheLauncherTakesTheWholeSandboxDown) {
  const std::string marker = "marker-" + random_suffix();
  test::ProcessOptions options = test::with_env(host_env());
  test::RunningProcess launcher(argv(plugin(), {"sleep", "60", marker}), options);
  auto ready = launcher.read_line(10s);
  ASSERT_TRUE(ready && ready->starts_with("ready ")) << ready.value_or("<nothing>");
  // Inside, the plugin is pid 2 (init is 1); on the host: launcher -> stage 1 -> init -> plugin.
  EXPECT_EQ(*ready, "ready 2");

  std::vector<pid_t> stage1 = children_of(launcher.pid());
  ASSERT_EQ(stage1.size(), 1u);
  std::vector<pid_t> init = children_of(stage1[0]);
  ASSERT_EQ(init.size(), 1u);
  std::vector<pid_t> plugin_pids = children_of(init[0]);
  ASSERT_EQ(plugin_pids.size(), 1u);
  const pid_t plugin_pid = plugin_pids[0];
  EXPECT_EQ(cmdline_of(plugin_pid), (std::vector<std::string>{plugin(), "sleep", "60", marker}));

  ASSERT_EQ(::kill(launcher.pid(), SIGKILL), 0);
  launcher.wait(5s);
  for (pid_t pid : {stage1[0], init[0], plugin_pid}) {
    const bool gone = gone_within(pid, 5s);
    EXPECT_TRUE(gone) << "pid " << pid << " outlived sandbox-host run";
    if (!gone) ::kill(pid, SIGKILL);
  }
}

// ---- set-up failures -------------------------------------------------------------------

TEST_P(NamespacesEscape, AnExecThatFailsInsideIsASetupFailure) {
  // Both pass the host's checks (executable regular files); their interpreters are not in
  // the sandbox: one exists nowhere, one only in a host directory nothing grants.
  test::TempFile missing("#!/nonexistent/interpreter\n", "missing-interpreter");
  fs::permissions(missing.path(), kWorldReadableDir);
  test::TempFile host_only("", "host-only-interpreter");
  const fs::path interpreter = host_only.dir() / "sh";
  fs::copy_file("/bin/sh", interpreter);
  fs::permissions(interpreter, kWorldReadableDir);
  write_file(host_only.path(), "#!" + interpreter.string() + "\necho escaped\n", kWorldReadableDir);

  for (const fs::path &binary : {missing.path(), host_only.path()}) {
    ProcessResult result = run(binary.string(), {});
    EXPECT_EQ(result.code, 87) << binary << "\n" << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err,
              "clawpatrol-sandbox: exec: " + binary.string() + ": No such file or directory\n");
  }
}

// ---- what a plugin may do --------------------------------------------------------------

TEST_P(NamespacesEscape, OrdinaryProgramsRunInside) {
  ProcessResult sh = run("/bin/sh", {"-c", "echo ok"});
  EXPECT_EQ(sh.code, 0) << sh.err;
  EXPECT_EQ(sh.out, "ok\n");

  ProcessResult env = run("/usr/bin/env", {});
  EXPECT_EQ(env.code, 0) << env.err;
  const std::string tmp = tmp_dir().string();
  EXPECT_EQ(env.out, "PATH=/usr/local/bin:/usr/bin:/bin\nLANG=C.UTF-8\nHOME=" + tmp +
                         "\nTMPDIR=" + tmp + "\n");

  test::TempFile data("granted\n", "data.txt");
  Launch launch;
  launch.read = {data.path().string()};
  Attempt read = attempt({"read", data.path().string()}, launch);
  EXPECT_TRUE(Allowed(read));
  EXPECT_EQ(read.verdict, "ALLOWED granted.");

  EXPECT_EQ(attempt({"cwd"}).verdict, "ALLOWED " + tmp);
  // Where a seccomp filter refuses sethostname (a container's profile), the sandbox keeps
  // this host's name, as probe's warning says.
  EXPECT_EQ(attempt({"hostname"}).verdict,
            "ALLOWED " + (sethostname_refused() ? this_host_name() : std::string("sandbox")));
  // sandbox-host's own private directories work too.
  Launch defaults;
  defaults.explicit_dirs = false;
  Attempt cwd = attempt({"cwd"}, defaults);
  EXPECT_TRUE(Allowed(cwd));
  EXPECT_TRUE(cwd.verdict.starts_with("ALLOWED /tmp/sandbox-host-")) << cwd;
}

INSTANTIATE_TEST_SUITE_P(AsUser, NamespacesEscape, kEveryCase, case_name);

}  // namespace
}  // namespace sandbox_host
