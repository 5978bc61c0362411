// The escape corpus of the landlock backend. Every test launches the real
// `sandbox-host run`, forced to the landlock backend, from a hostile environment, as root
// and as nobody, each both ways a sandbox is made (set up for a known Spec, and prepared
// before its Spec: `run --prepared`), and has escape_plugin attempt one thing: what a
// plugin must not do is DENIED, what it may do is ALLOWED, and every check would fail were
// its protection missing (the files, sockets and processes it aims at are ones the
// launching user could reach on the host).
//
// Landlock has no namespaces: the plugin is an ordinary process of the host, so what the
// host sees of it (/proc/<pid>) is checked from the host, and the gaps its probe's warning
// names are checked to exist (WarningSaysTruly_*): if one closes, the warning must change.
#include "coverage_warning.hpp"
#include "escape_harness.hpp"
#include "fixtures.hpp"
#include "landlock_abi.hpp"
#include "process.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/msg.h>
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

// The gap the warning of this kernel's ABI names, for the WarningSaysTruly_ tests.
::testing::AssertionResult WarningNames(const std::string &gap) {
  const std::string warning = landlock::coverage_warning(landlock::kernel_abi());
  if (warning.find(gap) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "the warning does not name \"" << gap << "\": " << warning;
}

// /proc/<pid>/status of a process, as the host sees it: field -> value, whitespace squeezed.
std::map<std::string, std::string> status_of(pid_t pid) {
  std::map<std::string, std::string> fields;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::istringstream words(line.substr(colon + 1));
    std::string value, word;
    while (words >> word) value += (value.empty() ? "" : " ") + word;
    fields[line.substr(0, colon)] = value;
  }
  return fields;
}

std::map<int, std::string> fds_of(pid_t pid) {
  std::map<int, std::string> fds;
  const fs::path dir = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto &entry : fs::directory_iterator(dir)) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(entry.path(), ec);
    fds[std::stoi(entry.path().filename().string())] = ec ? "?" : target.string();
  }
  return fds;
}

class LandlockEscape : public EscapeCorpus {
 protected:
  const char *backend() const override { return "landlock"; }

  void SetUp() override {
    if (landlock::kernel_abi() < 1) GTEST_SKIP() << "no Landlock on this kernel";
    EscapeCorpus::SetUp();
    // No mount namespace: the plugin reaches its directories through the workspace itself.
    hand_to_user(workspace_.dir());
  }

  static int abi() { return landlock::kernel_abi(); }

  // A process of the launching user's on the host, outside the sandbox, with a secret in
  // its environment: what a plugin must neither signal, trace nor read.
  std::unique_ptr<test::RunningProcess> host_process(const std::string &secret) const {
    std::vector<std::string> command;
    if (!root()) command = test::as_nobody();
    command.push_back("/bin/sleep");
    command.push_back("60");
    auto process = std::make_unique<test::RunningProcess>(
        command, test::with_env({"PATH=/usr/bin:/bin", "HOST_SECRET=" + secret}));
    // setpriv execs sleep in the same process: wait until it has.
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (cmdline_of(process->pid()) != std::vector<std::string>{"/bin/sleep", "60"} &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
    return process;
  }

  // A plugin that sleeps, launched in the background; its pid is the host's (no pid
  // namespace), read from its "ready <pid>" line.
  struct Sleeper {
    std::unique_ptr<test::RunningProcess> launcher;
    pid_t plugin = -1;
  };
  Sleeper sleeper(const std::string &marker) const {
    Sleeper s;
    s.launcher = std::make_unique<test::RunningProcess>(argv(plugin(), {"sleep", "60", marker}),
                                                        test::with_env(host_env()));
    auto ready = s.launcher->read_line(10s);
    if (ready && ready->starts_with("ready ")) s.plugin = std::stoi(ready->substr(6));
    return s;
  }
};

// ---- files -----------------------------------------------------------------------------

TEST_P(LandlockEscape, SecretsInTheHomeAndTheGatewayStateCannotBeReadOrListed) {
  std::unique_ptr<ScopedPath> secret_holder;
  const fs::path secret = make_secret(secret_holder);
  ScopedPath state_dir("/var/lib/sandbox-host-test-" + random_suffix());
  fs::create_directory(state_dir.path());
  fs::permissions(state_dir.path(), kWorldReadableDir);
  hand_to_user(state_dir.path());
  const fs::path state = state_dir.path() / "state.db";
  write_file(state, "gateway-state\n", kWorldReadable);
  hand_to_user(state);

  EXPECT_TRUE(DeniedWith(attempt({"read", secret.string()}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"list", secret.parent_path().string()}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"read", state.string()}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"list", state_dir.path().string()}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"list", "/var/lib"}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"list", "/"}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"list", "/etc"}), "EACCES"));
  // Only the non-secret part of /etc is granted (root could read shadow on the host).
  EXPECT_TRUE(DeniedWith(attempt({"read", "/etc/shadow"}), "EACCES"));
  EXPECT_TRUE(Allowed(attempt({"read", "/etc/passwd"})));
}

TEST_P(LandlockEscape, WritesOutsideSocketDirAndTmpDirAreRefused) {
  const std::string name = "sandbox-host-escape-" + random_suffix();
  // The host's /tmp and /var/tmp are writable by everyone, the workspace (beside SocketDir
  // and TmpDir) is the launching user's own: only Landlock stands in the way there.
  for (const fs::path &target :
       {fs::path("/" + name), fs::path("/usr/" + name), fs::path("/etc/" + name),
        fs::path("/usr/bin/" + name), fs::path("/tmp/" + name), fs::path("/var/tmp/" + name),
        fs::path("/dev/shm/" + name), workspace_.dir() / name}) {
    EXPECT_TRUE(DeniedWith(attempt({"write", target.string()}), "EACCES")) << target;
    EXPECT_FALSE(fs::exists(target)) << target << " appeared on the host";
    std::error_code ignored;
    fs::remove(target, ignored);
  }
  // An existing file of the launching user's, writable on the host.
  ScopedPath own("/tmp/sandbox-host-test-own-" + random_suffix());
  write_file(own.path(), "host data\n", kWorldReadable);
  hand_to_user(own.path());
  EXPECT_TRUE(DeniedWith(attempt({"open-write", own.path().string()}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"write", own.path().string()}), "EACCES"));
  EXPECT_EQ(slurp(own.path()), "host data\n");
}

// SocketDir's parent is the launching user's: a grant on SocketDir must not reach beside it.
TEST_P(LandlockEscape, WritesBesideASocketDirOutsideTmpAreRefused) {
  ScopedPath parent("/var/tmp/sandbox-host-test-" + random_suffix());
  fs::create_directory(parent.path());
  fs::permissions(parent.path(), kWorldReadableDir);
  hand_to_user(parent.path());
  fs::create_directory(parent.path() / "sock");
  hand_to_user(parent.path() / "sock");
  Launch launch;
  launch.socket_dir = (parent.path() / "sock").string();

  const fs::path beside = parent.path() / "beside";
  EXPECT_TRUE(DeniedWith(attempt({"write", beside.string()}, launch), "EACCES"));
  EXPECT_FALSE(fs::exists(beside));
  EXPECT_TRUE(Allowed(attempt({"write", (parent.path() / "sock/inside").string()}, launch)));
  EXPECT_TRUE(fs::exists(parent.path() / "sock/inside"));
}

TEST_P(LandlockEscape, TruncateOfAFileOutsideTheGrantsIsRefused) {
  if (abi() < 3) GTEST_SKIP() << "truncate(2) is restricted from ABI 3; the warning says so";
  ScopedPath own("/tmp/sandbox-host-test-truncate-" + random_suffix());
  write_file(own.path(), "host data\n", kWorldReadable);
  hand_to_user(own.path());
  EXPECT_TRUE(DeniedWith(attempt({"truncate", own.path().string()}), "EACCES"));
  EXPECT_EQ(slurp(own.path()), "host data\n");
}

TEST_P(LandlockEscape, WritesInSocketDirAndTmpDirReachTheHostAtTheSamePath) {
  for (const fs::path &target : {socket_dir() / "from-plugin", tmp_dir() / "from-plugin"}) {
    EXPECT_TRUE(Allowed(attempt({"write", target.string()}))) << target;
    EXPECT_EQ(slurp(target), "written by escape_plugin\n") << target;
    struct stat st {};
    ASSERT_EQ(::stat(target.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, uid()) << target;
    // Its own files it may also truncate.
    EXPECT_TRUE(Allowed(attempt({"truncate", target.string()}))) << target;
    EXPECT_EQ(slurp(target), "") << target;
  }
}

TEST_P(LandlockEscape, ReadPathsAreReadOnly) {
  test::TempFile data("data\n", "data.txt");
  hand_to_user(data.dir());
  hand_to_user(data.path());
  test::TempFile single("single\n", "single.txt");
  hand_to_user(single.path());
  Launch launch;
  launch.read = {data.dir().string(), single.path().string()};

  Attempt read = attempt({"read", data.path().string()}, launch);
  EXPECT_TRUE(Allowed(read));
  EXPECT_EQ(read.verdict, "ALLOWED data.");
  EXPECT_EQ(attempt({"list", data.dir().string()}, launch).verdict, "ALLOWED data.txt");
  EXPECT_EQ(attempt({"read", single.path().string()}, launch).verdict, "ALLOWED single.");
  // The launching user owns them: only Landlock refuses.
  for (const fs::path &path : {data.path(), single.path()}) {
    EXPECT_TRUE(DeniedWith(attempt({"write", path.string()}, launch), "EACCES")) << path;
    if (abi() >= 3) {
      EXPECT_TRUE(DeniedWith(attempt({"truncate", path.string()}, launch), "EACCES")) << path;
    }
  }
  EXPECT_TRUE(DeniedWith(attempt({"write", (data.dir() / "new").string()}, launch), "EACCES"));
  EXPECT_EQ(slurp(data.path()), "data\n");
  EXPECT_EQ(slurp(single.path()), "single\n");
  EXPECT_FALSE(fs::exists(data.dir() / "new"));
  // A file ReadPath grants that file alone, not its directory.
  EXPECT_TRUE(DeniedWith(attempt({"list", single.dir().string()}, launch), "EACCES"));
}

// The plugin's binary, owned by the launching user, is granted read and execute only. A
// running ELF binary refuses writes by itself (ETXTBSY) before Landlock is asked, so the
// plugin here is a script, which its interpreter only reads: it has escape_plugin (granted
// as a ReadPath) try to write and truncate the script.
TEST_P(LandlockEscape, ThePluginsBinaryIsReadOnly) {
  test::TempFile script("", "plugin.sh");
  write_file(script.path(), "#!/bin/sh\nexec " + plugin() + " \"$1\" \"$0\"\n", kWorldReadableDir);
  hand_to_user(script.path());
  const std::string before = slurp(script.path());
  Launch launch;
  launch.read = {plugin()};
  EXPECT_TRUE(
      DeniedWith(to_attempt(run(script.path().string(), {"open-write"}, launch)), "EACCES"));
  EXPECT_TRUE(DeniedWith(to_attempt(run(script.path().string(), {"write"}, launch)), "EACCES"));
  if (abi() >= 3) {
    EXPECT_TRUE(
        DeniedWith(to_attempt(run(script.path().string(), {"truncate"}, launch)), "EACCES"));
  }
  EXPECT_EQ(slurp(script.path()), before);
  // The ELF plugin itself: refused too, whichever check answers first.
  EXPECT_TRUE(Denied(attempt({"write-binary"})));
}

TEST_P(LandlockEscape, SymlinksInAReadPathLeadNowhereOutsideTheGrants) {
  std::unique_ptr<ScopedPath> secret_holder;
  const fs::path secret = make_secret(secret_holder);
  test::TempFile data("inside\n", "data.txt");
  test::TempFile sibling("sibling-secret\n", "secret.txt");
  const fs::path dir = data.dir() / "granted";
  fs::create_directory(dir);
  fs::rename(data.path(), dir / "data.txt");
  fs::create_symlink(secret, dir / "to-secret");
  fs::create_symlink(sibling.path(), dir / "to-sibling");
  fs::create_symlink(fs::relative(sibling.path(), dir), dir / "to-sibling-relative");
  fs::create_symlink(dir / "data.txt", dir / "to-inside");
  Launch launch;
  launch.read = {dir.string()};

  EXPECT_TRUE(DeniedWith(attempt({"read", (dir / "to-secret").string()}, launch), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"read", (dir / "to-sibling").string()}, launch), "EACCES"));
  EXPECT_TRUE(
      DeniedWith(attempt({"read", (dir / "to-sibling-relative").string()}, launch), "EACCES"));
  Attempt inside = attempt({"read", (dir / "to-inside").string()}, launch);
  EXPECT_TRUE(Allowed(inside));
  EXPECT_EQ(inside.verdict, "ALLOWED inside.");
}

// ---- network ---------------------------------------------------------------------------

// Without a network namespace, network "none" is the seccomp filter refusing every socket
// family but AF_UNIX (Landlock's TCP rule stands behind it: policy_test.cpp).
TEST_P(LandlockEscape, NetworkNoneRefusesEveryInternetSocket) {
  std::unique_ptr<Listener> tcp, udp;
  const int tcp_port = listen_inet(tcp);
  const int udp_port = listen_inet(udp, true);
  ASSERT_GT(tcp_port, 0);
  ASSERT_GT(udp_port, 0);

  EXPECT_TRUE(
      DeniedWith(attempt({"connect-tcp", "127.0.0.1", std::to_string(tcp_port)}), "EAFNOSUPPORT"));
  EXPECT_TRUE(DeniedWith(attempt({"bind-tcp"}), "EAFNOSUPPORT"));
  EXPECT_TRUE(
      DeniedWith(attempt({"send-udp", "127.0.0.1", std::to_string(udp_port)}), "EAFNOSUPPORT"));
  EXPECT_FALSE(anything_arrived(*tcp));
  EXPECT_FALSE(anything_arrived(*udp));
  expect_seccomp_records({"seccomp: socket (not AF_UNIX)", "seccomp: socket (not AF_UNIX)",
                          "seccomp: socket (not AF_UNIX)"});
}

TEST_P(LandlockEscape, NetworkNoneReachesNoAbstractSocketOfTheHost) {
  if (abi() < 6) GTEST_SKIP() << "abstract unix sockets are scoped from ABI 6; the warning says so";
  std::unique_ptr<Listener> abstract;
  const std::string abstract_name = "sandbox-host-escape-" + random_suffix();
  ASSERT_TRUE(listen_unix(abstract, abstract_name, true));
  EXPECT_TRUE(DeniedWith(attempt({"connect-abstract", abstract_name}), "EPERM"));
  EXPECT_FALSE(anything_arrived(*abstract));
}

TEST_P(LandlockEscape, NetworkOutboundReachesTheHostsLoopback) {
  std::unique_ptr<Listener> tcp, udp;
  const int tcp_port = listen_inet(tcp);
  const int udp_port = listen_inet(udp, true);
  ASSERT_GT(tcp_port, 0);
  ASSERT_GT(udp_port, 0);
  Launch launch;
  launch.network = "outbound";
  EXPECT_TRUE(Allowed(attempt({"connect-tcp", "127.0.0.1", std::to_string(tcp_port)}, launch)));
  EXPECT_TRUE(anything_arrived(*tcp));
  EXPECT_TRUE(Allowed(attempt({"send-udp", "127.0.0.1", std::to_string(udp_port)}, launch)));
  EXPECT_TRUE(anything_arrived(*udp));
  EXPECT_TRUE(Allowed(attempt({"bind-tcp"}, launch)));
}

// What SocketDir is for: the plugin serves on a unix socket there, and the host connects.
TEST_P(LandlockEscape, AUnixSocketInSocketDirServesTheHost) {
  const fs::path socket = socket_dir() / "plugin.sock";
  test::RunningProcess launcher(argv(plugin(), {"listen-unix", socket.string()}),
                                test::with_env(host_env()));
  auto listening = launcher.read_line(10s);
  ASSERT_EQ(listening.value_or("<nothing>"), "ALLOWED listening " + socket.string())
      << launcher.wait(5s).err;

  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address), 0)
      << std::strerror(errno);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  char buffer[64] = {};
  const ssize_t n = ::recv(fd, buffer, sizeof buffer - 1, MSG_WAITALL);
  ::close(fd);
  EXPECT_EQ(std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0), "hello from the plugin\n");
  ProcessResult result = launcher.wait(10s);
  EXPECT_EQ(result.code, 0) << result.err;
}

// ---- processes -------------------------------------------------------------------------

TEST_P(LandlockEscape, HostProcessesCannotBeSignalledTracedOrRead) {
  const std::string secret = "host-process-secret-" + random_suffix();
  auto host = host_process(secret);
  const std::string pid = std::to_string(host->pid());
  ASSERT_EQ(status_of(host->pid())["Uid"].substr(0, std::to_string(uid()).size()),
            std::to_string(uid()));

  if (abi() >= 6) {
    EXPECT_TRUE(DeniedWith(attempt({"kill", pid, std::to_string(SIGTERM)}), "EPERM"));
    EXPECT_TRUE(DeniedWith(attempt({"kill", pid, "0"}), "EPERM"));
    EXPECT_FALSE(test::process_gone(host->pid())) << "the host's process was killed";
  }
  EXPECT_TRUE(Denied(attempt({"ptrace", pid})));
  Attempt environ = attempt({"read", "/proc/" + pid + "/environ"});
  EXPECT_TRUE(DeniedWith(environ, "EACCES"));
  EXPECT_EQ(environ.result.out.find(secret), std::string::npos);
  EXPECT_TRUE(DeniedWith(attempt({"read", "/proc/" + pid + "/cmdline"}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"list", "/proc"}), "EACCES"));
  expect_seccomp_records({"seccomp: ptrace", "seccomp: ptrace"});
}

// Seen from the host, which can look at the plugin's /proc entry.
TEST_P(LandlockEscape, ThePluginRunsWithoutPrivilegesUnderAFilter) {
  Sleeper s = sleeper("marker-" + random_suffix());
  ASSERT_GT(s.plugin, 0);
  auto status = status_of(s.plugin);
  EXPECT_EQ(status["NoNewPrivs"], "1");
  EXPECT_EQ(status["Seccomp"], "2");
  EXPECT_EQ(status["Uid"], std::to_string(uid()) + " " + std::to_string(uid()) + " " +
                               std::to_string(uid()) + " " + std::to_string(uid()));
  const std::string zero = "0000000000000000";
  for (const char *set : {"CapEff", "CapPrm", "CapInh", "CapAmb"}) {
    EXPECT_EQ(status[set], zero) << set;
  }
  // As root, the bounding set is emptied too, so not even a setuid-root exec could raise a
  // capability; as nobody it cannot be (no CAP_SETPCAP), and no_new_privs holds instead.
  if (root()) {
    EXPECT_EQ(status["CapBnd"], zero);
  }
  ::kill(s.launcher->pid(), SIGTERM);  // forwarded to the plugin
  ProcessResult result = s.launcher->wait(10s);
  EXPECT_EQ(result.signal, 0);
  EXPECT_EQ(result.code, 128 + SIGTERM) << result.err;
}

TEST_P(LandlockEscape, AHostDescriptorWithoutCloexecDoesNotReachThePlugin) {
  std::unique_ptr<ScopedPath> secret_holder;
  const fs::path secret = make_secret(secret_holder);
  const int leak = ::open(secret.c_str(), O_RDONLY);  // no O_CLOEXEC, on purpose
  ASSERT_GE(leak, 3);
  Sleeper s = sleeper("marker-" + random_suffix());
  ::close(leak);
  ASSERT_GT(s.plugin, 0);
  const auto fds = fds_of(s.plugin);
  ASSERT_EQ(fds.size(), 3u) << "fds: " << [&] {
    std::string all;
    for (const auto &[fd, target] : fds) all += std::to_string(fd) + "=" + target + " ";
    return all;
  }();
  EXPECT_EQ(fds.count(0) + fds.count(1) + fds.count(2), 3u);
  EXPECT_EQ(fds.at(0), "/dev/null");
  for (const auto &[fd, target] : fds) EXPECT_NE(target, secret.string()) << fd;
}

TEST_P(LandlockEscape, TheEnvironmentIsExactlyBaseEnv) {
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
}

TEST_P(LandlockEscape, KillingTheLauncherTakesThePluginDown) {
  const std::string marker = "marker-" + random_suffix();
  Sleeper s = sleeper(marker);
  ASSERT_GT(s.plugin, 0);
  // No pid namespace and no init: the plugin is the launcher's own child (stage 1 exec'd it).
  EXPECT_EQ(children_of(s.launcher->pid()), std::vector<pid_t>{s.plugin});
  EXPECT_EQ(cmdline_of(s.plugin), (std::vector<std::string>{plugin(), "sleep", "60", marker}));

  ASSERT_EQ(::kill(s.launcher->pid(), SIGKILL), 0);
  s.launcher->wait(5s);
  const bool gone = gone_within(s.plugin, 5s);
  EXPECT_TRUE(gone) << "pid " << s.plugin << " outlived sandbox-host run";
  if (!gone) ::kill(s.plugin, SIGKILL);
}

// ---- privileges and the kernel's surface ------------------------------------------------

TEST_P(LandlockEscape, KernelAttackSurfaceIsFiltered) {
  EXPECT_TRUE(DeniedWith(attempt({"userns"}), "unshare=EPERM clone=EPERM clone3=ENOSYS"));
  EXPECT_TRUE(DeniedWith(attempt({"keyring"}), "keyctl=EPERM add_key=EPERM"));
  EXPECT_TRUE(DeniedWith(attempt({"mount"}), "mount=EPERM umount=EPERM"));
  for (const char *call : {"bpf", "perf", "userfaultfd"}) {
    EXPECT_TRUE(DeniedWith(attempt({call}), "EPERM")) << call;
  }
  expect_seccomp_records({"seccomp: add_key", "seccomp: bpf", "seccomp: clone (CLONE_NEWUSER)",
                          "seccomp: keyctl", "seccomp: mount", "seccomp: perf_event_open",
                          "seccomp: umount2", "seccomp: unshare (CLONE_NEWUSER)",
                          "seccomp: userfaultfd", "seccomp: userfaultfd"});
}

// A persona is inherited across execve(): ADDR_NO_RANDOMIZE would turn ASLR off, and
// READ_IMPLIES_EXEC make readable memory executable, for everything the plugin runs. The
// query must still answer (and show the persona unchanged).
TEST_P(LandlockEscape, PersonalitiesThatWeakenItsChildrenAreRefused) {
  EXPECT_TRUE(DeniedWith(attempt({"personality"}),
                         "no_randomize=EPERM read_implies_exec=EPERM high=EPERM query=0"));
  expect_seccomp_records({kPersonalityRule, kPersonalityRule, kPersonalityRule});
}

TEST_P(LandlockEscape, TheLdtIsOutOfReach) {
#if defined(__x86_64__)
  EXPECT_TRUE(DeniedWith(attempt({"modify-ldt"}), "EPERM"));
  expect_seccomp_records({"seccomp: modify_ldt"});
#else
  GTEST_SKIP() << "modify_ldt exists on x86 only";
#endif
}

// SocketDir and TmpDir are plain host directories here (no nosuid mount in between): a
// setuid program left there would work on the host. Only the filter stands in the way.
TEST_P(LandlockEscape, NoSetuidProgramCanBeLeftOnTheHost) {
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

TEST_P(LandlockEscape, NoInputCanBePushedIntoATerminal) {
  expect_no_terminal_input();
  expect_seccomp_records({"seccomp: ioctl (TIOCSTI)", "seccomp: ioctl (TIOCSTI)"});
}

// ---- set-up failures -------------------------------------------------------------------

TEST_P(LandlockEscape, AnExecThatFailsIsASetupFailure) {
  // Both pass the host's checks (executable regular files); one's interpreter exists
  // nowhere, the other's only in a host directory nothing grants (execute refused).
  test::TempFile missing("#!/nonexistent/interpreter\n", "missing-interpreter");
  fs::permissions(missing.path(), kWorldReadableDir);
  test::TempFile host_only("", "host-only-interpreter");
  const fs::path interpreter = host_only.dir() / "sh";
  fs::copy_file("/bin/sh", interpreter);
  fs::permissions(interpreter, kWorldReadableDir);
  write_file(host_only.path(), "#!" + interpreter.string() + "\necho escaped\n", kWorldReadableDir);

  for (const auto &[binary, reason] : {std::pair{missing.path(), "No such file or directory"},
                                       std::pair{host_only.path(), "Permission denied"}}) {
    ProcessResult result = run(binary.string(), {});
    EXPECT_EQ(result.code, 87) << binary << "\n" << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, "clawpatrol-sandbox: exec: " + binary.string() + ": " + reason + "\n");
  }
}

// ---- what a plugin may do --------------------------------------------------------------

TEST_P(LandlockEscape, OrdinaryProgramsRun) {
  ProcessResult sh = run("/bin/sh", {"-c", "echo ok"});
  EXPECT_EQ(sh.code, 0) << sh.err;
  EXPECT_EQ(sh.out, "ok\n");

  ProcessResult env = run("/usr/bin/env", {});
  EXPECT_EQ(env.code, 0) << env.err;
  const std::string tmp = tmp_dir().string();
  EXPECT_EQ(env.out, "PATH=/usr/local/bin:/usr/bin:/bin\nLANG=C.UTF-8\nHOME=" + tmp +
                         "\nTMPDIR=" + tmp + "\n");

  // A shell's "> /dev/null" opens with O_TRUNC; a pipeline and a file in TmpDir work.
  ProcessResult shell = run("/bin/sh", {"-c",
                                        "echo discarded > /dev/null && echo kept > \"$HOME/f\" && "
                                        "cat \"$HOME/f\" | tr a-z A-Z"});
  EXPECT_EQ(shell.code, 0) << shell.err;
  EXPECT_EQ(shell.out, "KEPT\n");

  EXPECT_EQ(attempt({"cwd"}).verdict, "ALLOWED " + tmp);
  // sandbox-host's own private directories work too.
  Launch defaults;
  defaults.explicit_dirs = false;
  Attempt cwd = attempt({"cwd"}, defaults);
  EXPECT_TRUE(Allowed(cwd));
  EXPECT_TRUE(cwd.verdict.starts_with("ALLOWED /tmp/sandbox-host-")) << cwd;
  EXPECT_TRUE(Allowed(attempt({"write", "from-plugin"}, defaults)));
}

// ---- the gaps the warning names --------------------------------------------------------

TEST_P(LandlockEscape, WarningSaysTruly_UnixSocketsOfTheUserAreReachableByPath) {
  ASSERT_TRUE(WarningNames("connect(2) to the launching user's unix sockets by path"));
  ScopedPath home("/tmp/sandbox-host-test-agent-" + random_suffix());
  fs::create_directory(home.path());
  fs::permissions(home.path(), kWorldReadableDir);
  hand_to_user(home.path());
  std::unique_ptr<Listener> agent;
  const std::string socket_path = (home.path() / "agent.sock").string();
  ASSERT_TRUE(listen_unix(agent, socket_path, false));
  EXPECT_TRUE(Allowed(attempt({"connect-unix", socket_path})))
      << "connect(2) by path is restricted now: update coverage_warning.cpp";
  EXPECT_TRUE(anything_arrived(*agent));
}

TEST_P(LandlockEscape, WarningSaysTruly_StatTellsTheSizeOfFilesOutsideTheGrants) {
  ASSERT_TRUE(
      WarningNames("a plugin can stat(2) files outside its grants (existence, size, times)"));
  std::unique_ptr<ScopedPath> secret_holder;
  const fs::path secret = make_secret(secret_holder);
  EXPECT_EQ(attempt({"stat", secret.string()}).verdict,
            "ALLOWED size=" + std::to_string(fs::file_size(secret)))
      << "stat(2) is restricted now: update coverage_warning.cpp";
  EXPECT_TRUE(DeniedWith(attempt({"read", secret.string()}), "EACCES"));
}

TEST_P(LandlockEscape, WarningSaysTruly_HostPidsCanBeProbedButProcIsNotGranted) {
  ASSERT_TRUE(WarningNames("a plugin can probe the host's pids (kill(pid, 0)), not read /proc"));
  auto host = host_process("unused");
  const std::string pid = std::to_string(host->pid());
  EXPECT_TRUE(Allowed(attempt({"see-pid", pid})));
  // kill(pid, 0) tells a live pid (EPERM) from a free one (ESRCH).
  const pid_t reaped = ::fork();
  if (reaped == 0) ::_exit(0);
  ASSERT_GT(reaped, 0);
  ::waitpid(reaped, nullptr, 0);
  if (abi() >= 6) {
    EXPECT_TRUE(DeniedWith(attempt({"kill", pid, "0"}), "EPERM"));
  }
  EXPECT_TRUE(DeniedWith(attempt({"kill", std::to_string(reaped), "0"}), "ESRCH"));
  EXPECT_TRUE(DeniedWith(attempt({"list", "/proc/" + pid}), "EACCES"));
  // Its own /proc entry is the one granted.
  EXPECT_TRUE(Allowed(attempt({"read", "/proc/self/status"})));
}

TEST_P(LandlockEscape, WarningSaysTruly_TheHostsNameIsVisible) {
  ASSERT_TRUE(WarningNames("a plugin sees the host's name"));
  char host_name[256] = {};
  ASSERT_EQ(::gethostname(host_name, sizeof host_name - 1), 0);
  EXPECT_EQ(attempt({"hostname"}).verdict, std::string("ALLOWED ") + host_name);
}

TEST_P(LandlockEscape, SystemVIpcOfTheLaunchingUserIsRefused) {
  // No ipc namespace: the seccomp filter stands in for one.
  // A queue of the launching user's on the host, under a key the plugin is told.
  std::random_device device;
  const key_t key = static_cast<key_t>(device() & 0x3fffffff) | 0x40000000;
  const int queue = ::msgget(key, IPC_CREAT | IPC_EXCL | 0600);
  ASSERT_GE(queue, 0) << std::strerror(errno);
  msqid_ds settings{};
  ASSERT_EQ(::msgctl(queue, IPC_STAT, &settings), 0);
  settings.msg_perm.uid = uid();
  settings.msg_perm.gid = uid();
  ASSERT_EQ(::msgctl(queue, IPC_SET, &settings), 0);

  Attempt a = attempt({"sysv-msg", std::to_string(key)});
  struct {
    long type;
    char text[32];
  } received{};
  const ssize_t n = ::msgrcv(queue, &received, sizeof received.text, 0, IPC_NOWAIT);
  ::msgctl(queue, IPC_RMID, nullptr);
  EXPECT_TRUE(DeniedWith(a, "EPERM"));
  EXPECT_LT(n, 0) << "the plugin's message arrived: " << received.text;
  expect_seccomp_records({"seccomp: msgget"});
}

INSTANTIATE_TEST_SUITE_P(AsUser, LandlockEscape, kEveryCase, case_name);

}  // namespace
}  // namespace sandbox_host
