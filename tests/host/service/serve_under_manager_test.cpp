// `sandbox-host serve` under a service manager, played by the test: NOTIFY_SOCKET is the
// test's datagram socket, and the listening sockets it made are passed as systemd passes
// them (descriptors from 3 on, LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES). READY=1 comes once
// the sockets answer, WATCHDOG=1 while serve's loops turn, STOPPING=1 on SIGTERM; inherited
// sockets are served, a mismatched one is refused by name, and neither the variables nor
// the descriptors reach a sandbox.
#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "notify_listener.hpp"
#include "process.hpp"
#include "serve_fixture.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

namespace sandbox_host {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::has_line;
using test::NotifyListener;
using test::read_file;
using test::value_of;

// What systemd puts in a service's environment for the notify protocol and activation.
constexpr const char *kManagerVariables[] = {"NOTIFY_SOCKET",  "LISTEN_FDS",    "LISTEN_PID",
                                             "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID"};

UniqueFd listening_socket(const fs::path &path, int type) {
  UniqueFd fd(::socket(AF_UNIX, type | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (!fd || ::bind(fd.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
      ::chmod(path.c_str(), 0600) != 0 || ::listen(fd.get(), 16) != 0) {
    throw std::runtime_error("listen at " + path.string() + ": " + std::strerror(errno));
  }
  return fd;
}

bool connects(const fs::path &path, int type) {
  UniqueFd fd(::socket(AF_UNIX, type | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  return ::connect(fd.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) == 0;
}

// "socket:[<inode>]", as /proc/<pid>/fd names the socket.
std::string proc_name(int fd) {
  struct stat st {};
  ::fstat(fd, &st);
  return "socket:[" + std::to_string(st.st_ino) + "]";
}

struct Inherited {
  std::string name;
  int fd;
};

// serve as systemd starts it: the environment it is given plus LISTEN_PID (its own pid,
// known only after the fork), the inherited sockets at 3, 4, ...; stderr to a file.
class ManagedServe {
 public:
  ManagedServe(std::vector<std::string> argv, std::vector<std::string> env,
               const std::vector<Inherited> &sockets, const fs::path &stderr_file) {
    std::string names;
    for (const auto &socket : sockets) names += (names.empty() ? "" : ":") + socket.name;
    if (!sockets.empty()) {
      env.push_back("LISTEN_FDS=" + std::to_string(sockets.size()));
      env.push_back("LISTEN_FDNAMES=" + names);
      env.push_back("LISTEN_PID=0000000000");  // written in the child, once its pid is known
    }
    std::vector<char *> args;
    for (auto &arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    std::vector<char *> envp;
    for (auto &entry : env) envp.push_back(entry.data());
    envp.push_back(nullptr);
    char *listen_pid = sockets.empty() ? nullptr : envp[envp.size() - 2];
    UniqueFd err(::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(err.get(), 2);
      // Above every target first, so that no dup2 below overwrites a socket still to move.
      std::vector<int> high;
      for (const auto &socket : sockets) high.push_back(::fcntl(socket.fd, F_DUPFD_CLOEXEC, 100));
      for (std::size_t i = 0; i < high.size(); ++i) ::dup2(high[i], 3 + static_cast<int>(i));
      if (listen_pid != nullptr) {
        std::snprintf(listen_pid, std::strlen(listen_pid) + 1, "LISTEN_PID=%d", ::getpid());
      }
      ::execve(args[0], args.data(), envp.data());
      ::_exit(127);
    }
  }
  ~ManagedServe() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  // Its exit code, or -1 when it did not exit within timeout.
  int wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) return -1;
      std::this_thread::sleep_for(10ms);
    }
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

class ServeUnderManager : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "runs serve as root";
    fs::create_directory(dir() / "l", ec_);
    fs::permissions(dir() / "l", fs::perms::owner_all, ec_);
    std::ofstream(dir() / "config.toml")
        << "[launcher]\nsocket = \"" << launcher_path().string() << "\"\n[broker]\nstate_dir = \""
        << (dir() / "state").string() << "\"\n[audit]\npath = \"" << (dir() / "audit.log").string()
        << "\"\nformat = \"json\"\n";
  }
  fs::path dir() const { return home_.dir(); }
  fs::path launcher_path() const { return dir() / "l/launch.sock"; }
  fs::path broker_path() const { return dir() / "l/broker.sock"; }
  std::vector<std::string> serve_argv() const {
    return {install().sandbox_host(),         "serve",    "--config",
            (dir() / "config.toml").string(), "--socket", broker_path().string() + "=activated"};
  }
  std::vector<std::string> base_env() const {
    return {"PATH=/usr/bin:/bin", "HOME=/root", manager_side_.variable()};
  }
  const test::UnprivilegedInstall &install() const { return test::shared_install(); }
  std::string serve_stderr() const { return read_file(dir() / "serve.err"); }
  test::ProcessResult launch(const std::vector<std::string> &args) const {
    std::vector<std::string> argv{install().sandbox_host_launch(), "--via", launcher_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv);
  }

  test::TempFile home_{"", "unused"};
  NotifyListener manager_side_{home_.dir()};
  std::error_code ec_;
};

TEST_F(ServeUnderManager, ReadyComesOnceItsSocketsAnswerWithTheStatusNamingThem) {
  ManagedServe serve(serve_argv(), base_env(), {}, dir() / "serve.err");
  const auto ready = manager_side_.wait_for("READY=1", 30s);
  ASSERT_TRUE(ready) << "no READY=1: " << serve_stderr();
  // Asked the moment READY=1 is read: both sockets answer already.
  EXPECT_TRUE(connects(launcher_path(), SOCK_STREAM));
  EXPECT_TRUE(connects(broker_path(), SOCK_SEQPACKET));
  const auto status = value_of(*ready, "STATUS");
  ASSERT_TRUE(status);
  EXPECT_NE(status->find("launcher on " + launcher_path().string()), std::string::npos) << *status;
  const auto launched = launch({"/bin/true"});
  EXPECT_EQ(launched.code, 0) << launched.err;
}

TEST_F(ServeUnderManager, WatchdogPingsComeEveryHalfIntervalAndStoppingOnSigterm) {
  auto env = base_env();
  env.push_back("WATCHDOG_USEC=3000000");
  ManagedServe serve(serve_argv(), env, {}, dir() / "serve.err");
  ASSERT_TRUE(manager_side_.wait_for("READY=1", 30s)) << serve_stderr();
  // A ping every 1.5 s: between two and four in 4.6 s.
  int pings = 0;
  const auto until = std::chrono::steady_clock::now() + 4600ms;
  while (std::chrono::steady_clock::now() < until) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    const auto notice = manager_side_.next(left);
    if (notice && has_line(*notice, "WATCHDOG=1")) ++pings;
  }
  EXPECT_GE(pings, 2);
  EXPECT_LE(pings, 4);
  // serve's whole process stopped: no thread of it pings, the watchdog runs out.
  ::kill(serve.pid(), SIGSTOP);
  EXPECT_FALSE(manager_side_.wait_for("WATCHDOG=1", 2s)) << "pinged while stopped";
  ::kill(serve.pid(), SIGCONT);
  ASSERT_TRUE(manager_side_.wait_for("WATCHDOG=1", 3s));
  ::kill(serve.pid(), SIGTERM);
  const auto stopping = manager_side_.wait_for("STOPPING=1", 10s);
  ASSERT_TRUE(stopping) << serve_stderr();
  EXPECT_EQ(value_of(*stopping, "STATUS"), "stopping on signal 15");
  EXPECT_EQ(serve.wait(20s), 0) << serve_stderr();
}

TEST_F(ServeUnderManager, AWatchdogItsIdleLoopsWouldMissIsRefusedBeforeReady) {
  auto env = base_env();
  env.push_back("WATCHDOG_USEC=2000000");
  ManagedServe serve(serve_argv(), env, {}, dir() / "serve.err");
  EXPECT_EQ(serve.wait(20s), 125);
  EXPECT_NE(serve_stderr().find("WatchdogSec=2000ms"), std::string::npos) << serve_stderr();
  EXPECT_FALSE(manager_side_.wait_for("READY=1", 100ms)) << "ready, with a watchdog it misses";
}

TEST_F(ServeUnderManager, InheritedSocketsAreServedAndReachNoSandbox) {
  const UniqueFd launcher = listening_socket(launcher_path(), SOCK_STREAM);
  const UniqueFd broker = listening_socket(broker_path(), SOCK_SEQPACKET);
  auto env = base_env();
  env.push_back("WATCHDOG_USEC=30000000");
  ManagedServe serve(serve_argv(), env, {{"launcher", launcher.get()}, {"broker", broker.get()}},
                     dir() / "serve.err");
  ASSERT_TRUE(manager_side_.wait_for("READY=1", 30s)) << serve_stderr();

  // The plugin, through the inherited launch socket.
  const auto report = launch({install().report_plugin()});
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_NE(report.out.find("env PATH="), std::string::npos) << report.out;
  for (const char *name : kManagerVariables) {
    EXPECT_EQ(report.out.find(std::string("env ") + name + "="), std::string::npos)
        << name << " reached the plugin:\n"
        << report.out;
  }
  for (const int fd : {launcher.get(), broker.get()}) {
    EXPECT_EQ(report.out.find(proc_name(fd)), std::string::npos)
        << "the plugin holds " << proc_name(fd) << ":\n"
        << report.out;
  }
  // The broker, through the inherited broker socket.
  const auto ping = test::run_process(
      {install().sandbox_host(), "ask", "ping", "--socket", broker_path().string()});
  EXPECT_EQ(ping.code, 0) << ping.err;
  EXPECT_EQ(ping.out, "pong");

  // Every process below serve (the prepared sandboxes' stage 1) was started without them.
  // A launch's sandbox is replaced a moment later: under load, wait for one.
  ASSERT_TRUE(test::eventually([&] { return !test::descendants(serve.pid()).empty(); }, 10s))
      << "no prepared sandbox to look at";
  const auto below = test::descendants(serve.pid());
  for (const pid_t pid : below) {
    const fs::path proc = "/proc/" + std::to_string(pid);
    const std::string environ = read_file(proc / "environ");
    for (const char *name : kManagerVariables) {
      EXPECT_EQ(environ.find(std::string(name) + "="), std::string::npos)
          << name << " in " << test::cmdline(pid);
    }
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(proc / "fd", ec)) {
      const std::string target = fs::read_symlink(entry.path(), ec).string();
      EXPECT_NE(target, proc_name(launcher.get())) << test::cmdline(pid);
      EXPECT_NE(target, proc_name(broker.get())) << test::cmdline(pid);
    }
  }

  ::kill(serve.pid(), SIGTERM);
  EXPECT_EQ(serve.wait(20s), 0) << serve_stderr();
  // The sockets are the manager's: left in place, still listening, for the next serve.
  EXPECT_TRUE(connects(launcher_path(), SOCK_STREAM)) << "serve shut the manager's socket";
  EXPECT_TRUE(connects(broker_path(), SOCK_SEQPACKET)) << "serve shut the manager's socket";
}

TEST_F(ServeUnderManager, AnInheritedSocketOfTheWrongTypeIsRefusedByName) {
  const UniqueFd launcher = listening_socket(launcher_path(), SOCK_SEQPACKET);
  ManagedServe serve(serve_argv(), base_env(), {{"launcher", launcher.get()}}, dir() / "serve.err");
  EXPECT_EQ(serve.wait(20s), 125);
  const std::string err = serve_stderr();
  EXPECT_NE(err.find("inherited socket \"launcher\" (fd 3, unix seqpacket"), std::string::npos)
      << err;
  EXPECT_NE(err.find("serve expects a listening unix stream (ListenStream=) socket at " +
                     launcher_path().string()),
            std::string::npos)
      << err;
  EXPECT_FALSE(manager_side_.next(100ms)) << "notified although it refused";
}

TEST_F(ServeUnderManager, AnInheritedSocketTheConfigDoesNotNameIsRefusedByName) {
  const UniqueFd elsewhere = listening_socket(dir() / "l/elsewhere.sock", SOCK_STREAM);
  ManagedServe serve(serve_argv(), base_env(), {{"launcher", elsewhere.get()}},
                     dir() / "serve.err");
  EXPECT_EQ(serve.wait(20s), 125);
  const std::string err = serve_stderr();
  EXPECT_NE(err.find("inherited socket \"launcher\" (fd 3, unix stream (ListenStream=) at " +
                     (dir() / "l/elsewhere.sock").string() + "): matches no socket"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("\"launcher\" at " + launcher_path().string()), std::string::npos) << err;
}

TEST_F(ServeUnderManager, AnInheritedLaunchSocketInADirectoryOthersReachIsRefused) {
  const UniqueFd launcher = listening_socket(launcher_path(), SOCK_STREAM);
  fs::permissions(dir() / "l",
                  fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  ManagedServe serve(serve_argv(), base_env(), {{"launcher", launcher.get()}}, dir() / "serve.err");
  EXPECT_EQ(serve.wait(20s), 125);
  const std::string err = serve_stderr();
  EXPECT_NE(err.find("is mode 0711; it must be 0700"), std::string::npos) << err;
}

}  // namespace
}  // namespace sandbox_host
