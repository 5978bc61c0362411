// What the escape corpora of the Linux backends share: who launches and how, the launching
// user's copy of sandbox-host and escape_plugin, and reading escape_plugin's verdicts
// ("ALLOWED ..." or "DENIED <errno name>" on its first stdout line).
#pragma once

#include "fixtures.hpp"
#include "process.hpp"

#include <sandbox_host/backends/seccomp_status.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace sandbox_host::test::escape {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

enum class User { root, nobody };
enum class Setup { cold, prepared };

struct Case {
  User user;
  Setup setup;
};

inline void PrintTo(const Case &c, std::ostream *out) {
  *out << (c.user == User::root ? "root" : "nobody")
       << (c.setup == Setup::prepared ? "_prepared" : "_cold");
}

// Every case, for INSTANTIATE_TEST_SUITE_P(AsUser, Suite, kEveryCase, case_name).
inline const auto kEveryCase =
    ::testing::Values(Case{User::root, Setup::cold}, Case{User::nobody, Setup::cold},
                      Case{User::root, Setup::prepared}, Case{User::nobody, Setup::prepared});

inline std::string case_name(const ::testing::TestParamInfo<Case> &info) {
  std::ostringstream name;
  PrintTo(info.param, &name);
  return name.str();
}

inline std::string random_suffix() {
  std::random_device device;
  std::ostringstream out;
  out << std::hex << device() << device();
  return out.str();
}

inline std::string slurp(const fs::path &path) {
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

inline void write_file(const fs::path &path, const std::string &contents, fs::perms perms) {
  std::ofstream(path) << contents;
  fs::permissions(path, perms);
}

inline constexpr fs::perms kWorldReadable =
    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
inline constexpr fs::perms kWorldReadableDir = fs::perms::owner_all | fs::perms::group_read |
                                               fs::perms::group_exec | fs::perms::others_read |
                                               fs::perms::others_exec;

// sandbox-host, its modules and escape_plugin where nobody can run them: the shared
// UnprivilegedInstall plus the escape plugin copied into its bin/. Made once per binary.
class EscapeInstall {
 public:
  explicit EscapeInstall(const std::string &escape_plugin) {
    plugin_ = (install_.dir() / "bin/escape_plugin").string();
    fs::copy_file(escape_plugin, plugin_, fs::copy_options::overwrite_existing);
    fs::permissions(plugin_, kWorldReadableDir);
  }
  std::string sandbox_host() const { return install_.sandbox_host(); }
  const std::string &plugin() const { return plugin_; }

 private:
  UnprivilegedInstall install_;
  std::string plugin_;
};

// What one attempt printed: its verdict line, the lines after it, the raw result.
struct Attempt {
  ProcessResult result;
  std::string verdict;             // first stdout line
  std::vector<std::string> extra;  // the lines after it
};

inline std::ostream &operator<<(std::ostream &out, const Attempt &a) {
  return out << "exit " << a.result.code << " signal " << a.result.signal
             << (a.result.timed_out ? " (timed out)" : "") << "\nstdout:\n"
             << a.result.out << "stderr:\n"
             << a.result.err;
}

inline Attempt to_attempt(ProcessResult result) {
  Attempt attempt;
  std::istringstream in(result.out);
  std::string line;
  if (std::getline(in, line)) attempt.verdict = line;
  while (std::getline(in, line)) attempt.extra.push_back(line);
  attempt.result = std::move(result);
  return attempt;
}

inline ::testing::AssertionResult Denied(const Attempt &a) {
  if (a.result.code == 0 && a.verdict.starts_with("DENIED ")) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "expected DENIED; " << a;
}

inline ::testing::AssertionResult Allowed(const Attempt &a) {
  if (a.result.code == 0 && a.verdict.starts_with("ALLOWED")) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "expected ALLOWED; " << a;
}

// A verdict as the corpus compares it. The sandbox's filter sends its refusals to the host,
// which answers them (SECCOMP_RET_USER_NOTIF); under a container's seccomp profile, a call
// the profile refuses too is answered by the profile, whose errno the kernel lets win
// (podman's: ENOSYS for some), so there the two read alike: refused either way.
inline std::string refused_alike(std::string verdict) {
  if (!backends::under_seccomp_filter()) return verdict;
  for (std::size_t at; (at = verdict.find("=ENOSYS")) != std::string::npos;) {
    verdict.replace(at, 7, "=EPERM");
  }
  return verdict;
}

inline ::testing::AssertionResult DeniedWith(const Attempt &a, const std::string &reason) {
  if (a.result.code == 0 && refused_alike(a.verdict) == refused_alike("DENIED " + reason)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "expected \"DENIED " << reason << "\"; " << a;
}

inline pid_t parent_of(pid_t pid) {
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

inline std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto &entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const pid_t pid = std::stoi(name);
    if (parent_of(pid) == parent) children.push_back(pid);
  }
  return children;
}

inline std::vector<std::string> cmdline_of(pid_t pid) {
  std::string raw = slurp("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> args;
  std::string arg;
  std::istringstream in(raw);
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

inline bool gone_within(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!test::process_gone(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// A listening socket of the host, closed on destruction.
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

// Whether anything reached the listener (a connection, or a datagram), taking it.
inline bool anything_arrived(const Listener &listener) {
  const int flags = ::fcntl(listener.fd(), F_GETFL);
  ::fcntl(listener.fd(), F_SETFL, flags | O_NONBLOCK);
  char byte;
  int type = 0;
  socklen_t size = sizeof type;
  ::getsockopt(listener.fd(), SOL_SOCKET, SO_TYPE, &type, &size);
  if (type == SOCK_DGRAM) return ::recv(listener.fd(), &byte, 1, 0) >= 0;
  const int connection = ::accept(listener.fd(), nullptr, nullptr);
  if (connection < 0) return false;
  ::close(connection);
  return true;
}

// A TCP (or, with datagram, UDP) socket on 127.0.0.1:<ephemeral>; returns the port.
inline int listen_inet(std::unique_ptr<Listener> &holder, bool datagram = false) {
  int fd = ::socket(AF_INET, (datagram ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
  holder = std::make_unique<Listener>(fd);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) return -1;
  if (!datagram && ::listen(fd, 16) != 0) return -1;
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &size);
  return ntohs(address.sin_port);
}

// A unix listener: at path, or abstract (\0name) when abstract.
inline bool listen_unix(std::unique_ptr<Listener> &holder, const std::string &name, bool abstract) {
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

// Whether anything arrived on a listening or datagram socket, without waiting.

// The record of the personality rule, as the corpus claims it.
inline const std::string kPersonalityRule =
    "seccomp: personality (other than 0, 0x8, 0x20000, 0x20008, 0xffffffff)";

// How a sandbox is launched, beyond the plugin's arguments.
struct Launch {
  std::string network = "none";
  std::vector<std::string> read;
  bool explicit_dirs = true;              // the workspace's sock/ and tmp/, else sandbox-host's own
  std::optional<std::string> socket_dir;  // instead of the workspace's sock/
};

// The fixture of an escape corpus: the launching user (root or nobody), the way the
// sandbox is made (cold or prepared), a workspace of the user's, and escape_plugin launched
// through the real `sandbox-host run`. The including test
// binary defines ESCAPE_PLUGIN, the plugin's build.
class EscapeCorpus : public ::testing::TestWithParam<Case> {
 protected:
  // The backend every launch is forced to (CLAWPATROL_SANDBOX_BACKEND).
  virtual const char *backend() const = 0;

  static void SetUpTestSuite() { install_ = new EscapeInstall(ESCAPE_PLUGIN); }
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
    // The audit, where each refused system call leaves its record: in a directory of the
    // launching user's, outside every grant.
    fs::create_directory(workspace_.dir() / "audit");
    hand_to_user(workspace_.dir() / "audit");
    std::ofstream(config_.path()) << "[audit]\npath = \"" << audit_path().string()
                                  << "\"\nformat = \"json\"\n[plugins.escape]\n";
  }

  // Every refused system call leaves exactly its record: each test claims the ones its
  // attempts made (expect_seccomp_records), and none may be left unclaimed.
  void TearDown() override {
    if (::geteuid() != 0 || !records_comparable()) return;
    EXPECT_EQ(seccomp_records(), std::multiset<std::string>{})
        << "seccomp records no attempt of this test claimed";
  }

  fs::path audit_path() const { return workspace_.dir() / "audit" / "audit.log"; }

  // Under a container's own seccomp profile, a call it refuses too is answered by it and
  // leaves no record (docs/security-model.md): records are compared outside one only.
  static bool records_comparable() { return !backends::under_seccomp_filter(); }

  // The rules of the seccomp records written since the last call, "seccomp: keyctl".
  std::multiset<std::string> seccomp_records() {
    std::ifstream in(audit_path());
    in.seekg(static_cast<std::streamoff>(audit_read_));
    std::multiset<std::string> rules;
    for (std::string line; std::getline(in, line);) {
      audit_read_ += line.size() + 1;
      const auto at = line.find("\"rule\":\"seccomp: ");
      if (at == std::string::npos) continue;
      const auto start = at + 8;
      rules.insert(line.substr(start, line.find('"', start) - start));
    }
    return rules;
  }

  // The attempts since the last claim left exactly these records (and a prepared sandbox's
  // records name the plugin too: the audit's plugin field is checked by the seccomp suite).
  void expect_seccomp_records(const std::multiset<std::string> &rules) {
    if (!records_comparable()) return;
    EXPECT_EQ(seccomp_records(), rules);
  }

  bool root() const { return GetParam().user == User::root; }
  bool prepared() const { return GetParam().setup == Setup::prepared; }
  unsigned uid() const { return root() ? 0u : kNobody; }

  // Makes a path the launching user's own, so that only the sandbox stands in the way.
  void hand_to_user(const fs::path &path) const {
    if (!root()) {
      ASSERT_EQ(::lchown(path.c_str(), kNobody, kNobody), 0) << path;
    }
  }

  fs::path socket_dir() const { return workspace_.dir() / "sock"; }
  fs::path tmp_dir() const { return workspace_.dir() / "tmp"; }

  std::string sandbox_host() const { return root() ? SANDBOX_HOST_EXE : install_->sandbox_host(); }
  // The copy for root too: the build tree may lie in root's home, which the plugin's path
  // would then make appear in the sandbox.
  std::string plugin() const { return install_->plugin(); }

  // The host's environment: the forced backend and secrets that must not reach the plugin.
  std::vector<std::string> host_env() const {
    return {"PATH=/usr/bin:/bin",
            "HOME=/root",
            std::string("CLAWPATROL_SANDBOX_BACKEND=") + backend(),
            "CLAWPATROL_GATEWAY_TOKEN=ghp_x",
            "AWS_SECRET_ACCESS_KEY=y",
            "SSH_AUTH_SOCK=/run/user/0/ssh-agent.socket"};
  }

  std::vector<std::string> argv(const std::string &binary, const std::vector<std::string> &args,
                                const Launch &launch = {}) const {
    std::vector<std::string> out;
    if (!root()) out = as_nobody();
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
    ProcessOptions options = with_env(host_env());
    options.timeout = 15s;
    return run_process(argv(binary, args, launch), options);
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

  // TIOCSTI into a terminal nobody has as its controlling one, given as stdin.
  void expect_no_terminal_input() const {
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
    ProcessOptions options = with_env(host_env());
    options.stdin_fd = slave;
    options.timeout = 15s;
    Attempt a = to_attempt(run_process(argv(plugin(), {"tiocsti"}), options));
    ::close(slave);
    EXPECT_TRUE(DeniedWith(a, "tty=yes plain=EPERM high=EPERM"));
    // Nothing arrived on the terminal (an injected byte would be echoed to the master).
    ::fcntl(master, F_SETFL, O_NONBLOCK);
    char buffer[64];
    ssize_t n = ::read(master, buffer, sizeof buffer);
    EXPECT_LE(n, 0) << "the terminal received " << std::string(buffer, n > 0 ? n : 0);
    ::close(master);
  }

  static inline EscapeInstall *install_ = nullptr;
  std::size_t audit_read_ = 0;  // bytes of the audit seccomp_records() has read
  TempFile config_{"[plugins.escape]\n", "config.toml"};
  TempFile workspace_{"", "unused"};
};

}  // namespace sandbox_host::test::escape
