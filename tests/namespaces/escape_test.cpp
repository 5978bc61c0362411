// The escape corpus of the namespaces backend. Every test launches the real
// `sandbox-host run`, forced to the namespaces backend, from a hostile environment, as root
// and as nobody, each both ways a sandbox is made (set up for a known Spec, and prepared
// before its Spec as a long-running host's SandboxPool does: `run --prepared`), and has
// escape_plugin attempt one thing: what a plugin must not
// do is DENIED, what it may do is ALLOWED, and every check would fail were its protection
// missing (the files, sockets and processes it aims at are ones the launching user could
// reach on the host).
#include "fixtures.hpp"
#include "process.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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

namespace fs = std::filesystem;
using test::ProcessResult;
using namespace std::chrono_literals;

enum class User { root, nobody };
enum class Setup { cold, prepared };

struct Case {
  User user;
  Setup setup;
};

void PrintTo(const Case &c, std::ostream *out) {
  *out << (c.user == User::root ? "root" : "nobody")
       << (c.setup == Setup::prepared ? "_prepared" : "_cold");
}

std::string random_suffix() {
  std::random_device device;
  std::ostringstream out;
  out << std::hex << device() << device();
  return out.str();
}

std::string slurp(const fs::path &path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A path the test created outside every grant; removed (recursively) on destruction.
class ScopedPath {
 public:
  explicit ScopedPath(fs::path path) : path_(std::move(path)) {}
  ~ScopedPath() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScopedPath(const ScopedPath &) = delete;
  ScopedPath &operator=(const ScopedPath &) = delete;
  const fs::path &path() const noexcept { return path_; }

 private:
  fs::path path_;
};

void write_file(const fs::path &path, const std::string &contents, fs::perms perms) {
  std::ofstream(path) << contents;
  fs::permissions(path, perms);
}

constexpr fs::perms kWorldReadable =
    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
constexpr fs::perms kWorldReadableDir = fs::perms::owner_all | fs::perms::group_read |
                                        fs::perms::group_exec | fs::perms::others_read |
                                        fs::perms::others_exec;

// sandbox-host, its modules and escape_plugin where nobody can run them: the shared
// UnprivilegedInstall plus the escape plugin copied into its bin/. Made once per binary.
class EscapeInstall {
 public:
  EscapeInstall() {
    plugin_ = (install_.dir() / "bin/escape_plugin").string();
    fs::copy_file(ESCAPE_PLUGIN, plugin_, fs::copy_options::overwrite_existing);
    fs::permissions(plugin_, kWorldReadableDir);
  }
  std::string sandbox_host() const { return install_.sandbox_host(); }
  const std::string &plugin() const { return plugin_; }

 private:
  test::UnprivilegedInstall install_;
  std::string plugin_;
};

// What one attempt printed: its verdict line, the lines after it, the raw result.
struct Attempt {
  ProcessResult result;
  std::string verdict;             // first stdout line
  std::vector<std::string> extra;  // the lines after it
};

std::ostream &operator<<(std::ostream &out, const Attempt &a) {
  return out << "exit " << a.result.code << " signal " << a.result.signal
             << (a.result.timed_out ? " (timed out)" : "") << "\nstdout:\n"
             << a.result.out << "stderr:\n"
             << a.result.err;
}

Attempt to_attempt(ProcessResult result) {
  Attempt attempt;
  std::istringstream in(result.out);
  std::string line;
  if (std::getline(in, line)) attempt.verdict = line;
  while (std::getline(in, line)) attempt.extra.push_back(line);
  attempt.result = std::move(result);
  return attempt;
}

::testing::AssertionResult Denied(const Attempt &a) {
  if (a.result.code == 0 && a.verdict.starts_with("DENIED ")) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "expected DENIED; " << a;
}

::testing::AssertionResult Allowed(const Attempt &a) {
  if (a.result.code == 0 && a.verdict.starts_with("ALLOWED")) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "expected ALLOWED; " << a;
}

::testing::AssertionResult DeniedWith(const Attempt &a, const std::string &reason) {
  if (a.result.code == 0 && a.verdict == "DENIED " + reason) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected \"DENIED " << reason << "\"; " << a;
}

// How a sandbox is launched, beyond the plugin's arguments.
struct Launch {
  std::string network = "none";
  std::vector<std::string> read;
  bool explicit_dirs = true;              // the workspace's sock/ and tmp/, else sandbox-host's own
  std::optional<std::string> socket_dir;  // instead of the workspace's sock/
};

class NamespacesEscape : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() { install_ = new EscapeInstall(); }
  static void TearDownTestSuite() {
    delete install_;
    install_ = nullptr;
  }

  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: it launches as root and as nobody";
    // The workspace: SocketDir and TmpDir, owned by the launching user.
    fs::create_directory(workspace_.dir() / "sock");
    fs::create_directory(workspace_.dir() / "tmp");
    hand_to_user(workspace_.dir() / "sock");
    hand_to_user(workspace_.dir() / "tmp");
  }

  bool root() const { return GetParam().user == User::root; }
  bool prepared() const { return GetParam().setup == Setup::prepared; }
  unsigned uid() const { return root() ? 0u : test::kNobody; }

  // Makes a path the launching user's own, so that only the sandbox stands in the way.
  void hand_to_user(const fs::path &path) const {
    if (!root()) {
      ASSERT_EQ(::lchown(path.c_str(), test::kNobody, test::kNobody), 0) << path;
    }
  }

  fs::path socket_dir() const { return workspace_.dir() / "sock"; }
  fs::path tmp_dir() const { return workspace_.dir() / "tmp"; }

  std::string sandbox_host() const { return root() ? SANDBOX_HOST_EXE : install_->sandbox_host(); }
  std::string plugin() const { return root() ? ESCAPE_PLUGIN : install_->plugin(); }

  // The host's environment: the forced backend and secrets that must not reach the plugin.
  static std::vector<std::string> host_env() {
    return {"PATH=/usr/bin:/bin",
            "HOME=/root",
            "CLAWPATROL_SANDBOX_BACKEND=namespaces",
            "CLAWPATROL_GATEWAY_TOKEN=ghp_x",
            "AWS_SECRET_ACCESS_KEY=y",
            "SSH_AUTH_SOCK=/run/user/0/ssh-agent.socket"};
  }

  std::vector<std::string> argv(const std::string &binary, const std::vector<std::string> &args,
                                const Launch &launch = {}) const {
    std::vector<std::string> out;
    if (!root()) out = test::as_nobody();
    for (const std::string &arg :
         {sandbox_host(), std::string("run"), std::string("--config"), config_.path().string(),
          std::string("--name"), std::string("escape"), std::string("--network"), launch.network}) {
      out.push_back(arg);
    }
    if (prepared()) out.push_back("--prepared");
    if (launch.explicit_dirs) {
      for (const std::string &arg :
           {std::string("--socket-dir"), launch.socket_dir.value_or(socket_dir().string()),
            std::string("--tmp-dir"), tmp_dir().string()}) {
        out.push_back(arg);
      }
    }
    for (const auto &path : launch.read) {
      out.push_back("--read");
      out.push_back(path);
    }
    out.push_back("--");
    out.push_back(binary);
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }

  ProcessResult run(const std::string &binary, const std::vector<std::string> &args,
                    const Launch &launch = {}) const {
    test::ProcessOptions options = test::with_env(host_env());
    options.timeout = 15s;
    return test::run_process(argv(binary, args, launch), options);
  }

  Attempt attempt(const std::vector<std::string> &args, const Launch &launch = {}) const {
    return to_attempt(run(plugin(), args, launch));
  }

  // A secret of the launching user's that the host lets it read: in root's home; for
  // nobody, a 0644 file in a directory of its own under the host's /tmp.
  fs::path make_secret(std::unique_ptr<ScopedPath> &holder) const {
    const std::string suffix = random_suffix();
    if (root()) {
      holder = std::make_unique<ScopedPath>("/root/.sandbox-host-test-secret-" + suffix);
      write_file(holder->path(), "root-secret-" + suffix + "\n", kWorldReadable);
      return holder->path();
    }
    holder = std::make_unique<ScopedPath>("/tmp/sandbox-host-test-home-" + suffix);
    fs::create_directory(holder->path());
    fs::permissions(holder->path(), kWorldReadableDir);
    const fs::path secret = holder->path() / "secret";
    write_file(secret, "nobody-secret-" + suffix + "\n", kWorldReadable);
    hand_to_user(holder->path());
    hand_to_user(secret);
    return secret;
  }

  static EscapeInstall *install_;
  test::TempFile config_{"[plugins.escape]\n", "config.toml"};
  test::TempFile workspace_{"", "unused"};
};

EscapeInstall *NamespacesEscape::install_ = nullptr;

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

class Listener {
 public:
  explicit Listener(int fd) : fd_(fd) {}
  ~Listener() {
    if (fd_ >= 0) ::close(fd_);
  }
  Listener(const Listener &) = delete;
  Listener &operator=(const Listener &) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// A TCP listener on 127.0.0.1:<ephemeral>; returns the port.
int listen_tcp(std::unique_ptr<Listener> &holder) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  holder = std::make_unique<Listener>(fd);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) return -1;
  if (::listen(fd, 16) != 0) return -1;
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &size);
  return ntohs(address.sin_port);
}

// A unix listener: at path, or abstract (\0name) when abstract.
bool listen_unix(std::unique_ptr<Listener> &holder, const std::string &name, bool abstract) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  holder = std::make_unique<Listener>(fd);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  socklen_t length = sizeof address;
  if (abstract) {
    std::memcpy(address.sun_path + 1, name.data(), name.size());
    length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  } else {
    std::strncpy(address.sun_path, name.c_str(), sizeof address.sun_path - 1);
  }
  if (::bind(fd, reinterpret_cast<sockaddr *>(&address), length) != 0) return false;
  if (!abstract) ::chmod(name.c_str(), 0666);
  return ::listen(fd, 16) == 0;
}

TEST_P(NamespacesEscape, NetworkNoneReachesNoListenerOfTheHost) {
  std::unique_ptr<Listener> tcp, unix_socket, abstract;
  const int port = listen_tcp(tcp);
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
  const int port = listen_tcp(tcp);
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
}

TEST_P(NamespacesEscape, NoNestedUserNamespace) {
  // clone3 answers ENOSYS so that libc falls back to clone, whose flags the filter reads.
  EXPECT_TRUE(DeniedWith(attempt({"userns"}), "unshare=EPERM clone=EPERM clone3=ENOSYS"));
}

TEST_P(NamespacesEscape, TheKernelKeyringIsOutOfReach) {
  EXPECT_TRUE(DeniedWith(attempt({"keyring"}), "keyctl=EPERM add_key=EPERM"));
}

TEST_P(NamespacesEscape, KernelAttackSurfaceIsFiltered) {
  for (const char *call : {"bpf", "perf", "userfaultfd", "setns"}) {
    EXPECT_TRUE(DeniedWith(attempt({call}), "EPERM")) << call;
  }
}

TEST_P(NamespacesEscape, SocketDirAndTmpDirIgnoreSetuidBits) {
  for (const fs::path &dir : {socket_dir(), tmp_dir()}) {
    Attempt a = attempt({"chmod-exec-setuid", dir.string()});
    EXPECT_TRUE(Denied(a)) << dir;
    EXPECT_TRUE(a.verdict.starts_with("DENIED nosuid")) << a;
  }
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
  // A terminal nobody has as its controlling one, as stdin: the plugin can make it its own,
  // so the kernel's own "not your terminal" check would not refuse TIOCSTI; only the
  // filter does, whatever the upper 32 bits of the request hold.
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const std::string slave_name = ::ptsname(master);
  ASSERT_EQ(::chown(slave_name.c_str(), uid(), uid()), 0);
  int slave = ::open(slave_name.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(slave, 0);
  test::ProcessOptions options = test::with_env(host_env());
  options.stdin_fd = slave;
  options.timeout = 15s;
  Attempt a = to_attempt(test::run_process(argv(plugin(), {"tiocsti"}), options));
  ::close(slave);
  EXPECT_TRUE(DeniedWith(a, "tty=yes plain=EPERM high=EPERM"));
  // Nothing arrived on the terminal (an injected byte would be echoed to the master).
  ::fcntl(master, F_SETFL, O_NONBLOCK);
  char buffer[64];
  ssize_t n = ::read(master, buffer, sizeof buffer);
  EXPECT_LE(n, 0) << "the terminal received " << std::string(buffer, n > 0 ? n : 0);
  ::close(master);
}

// ---- lifetime --------------------------------------------------------------------------

pid_t parent_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return -1;
  auto close_paren = line.rfind(')');
  if (close_paren == std::string::npos) return -1;
  std::istringstream rest(line.substr(close_paren + 2));
  char state;
  pid_t ppid = -1;
  rest >> state >> ppid;
  return ppid;
}

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto &entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const pid_t pid = std::stoi(name);
    if (parent_of(pid) == parent) children.push_back(pid);
  }
  return children;
}

std::vector<std::string> cmdline_of(pid_t pid) {
  std::string raw = slurp("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> args;
  std::string arg;
  std::istringstream in(raw);
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

bool gone_within(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!test::process_gone(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

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
  EXPECT_EQ(attempt({"hostname"}).verdict, "ALLOWED sandbox");
  // sandbox-host's own private directories work too.
  Launch defaults;
  defaults.explicit_dirs = false;
  Attempt cwd = attempt({"cwd"}, defaults);
  EXPECT_TRUE(Allowed(cwd));
  EXPECT_TRUE(cwd.verdict.starts_with("ALLOWED /tmp/sandbox-host-")) << cwd;
}

INSTANTIATE_TEST_SUITE_P(AsUser, NamespacesEscape,
                         ::testing::Values(Case{User::root, Setup::cold},
                                           Case{User::nobody, Setup::cold},
                                           Case{User::root, Setup::prepared},
                                           Case{User::nobody, Setup::prepared}),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           std::ostringstream name;
                           PrintTo(info.param, &name);
                           return name.str();
                         });

}  // namespace
}  // namespace sandbox_host
