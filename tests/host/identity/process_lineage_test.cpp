// What a process is, against real children: its descendants, its uid (process_uid), and its
// origin, the working directory and environment it runs with.
#include "process_identity_harness.hpp"

namespace sandbox_host::broker {
namespace {

using namespace identity_harness;

// A forked child that runs prepare (returning 0, or an errno on failure) and then execs
// argv with env; ready() is true once the exec happened. Killed and reaped on destruction.
class ExecChild {
 public:
  ExecChild(
      std::vector<std::string> argv, std::vector<std::string> env,
      const std::function<int()> &prepare = [] { return 0; }) {
    std::vector<char *> args, envp;
    for (auto &a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    for (auto &e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    auto [status_read, status_write] = cloexec_pipe();
    pid_ = ::fork();
    if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork");
    if (pid_ == 0) {
      status_read.reset();
      int error = prepare();
      if (error == 0) {
        ::execve(args[0], args.data(), envp.data());
        error = errno;
      }
      (void)!::write(status_write.get(), &error, sizeof error);
      ::_exit(127);
    }
    status_write.reset();
    // EOF: the close-on-exec write end went with the exec. A number: why it did not.
    int error = 0;
    pollfd ready{status_read.get(), POLLIN, 0};
    if (::poll(&ready, 1, 10000) == 1) {
      const ssize_t n = ::read(status_read.get(), &error, sizeof error);
      exec_error_ = n == 0 ? 0 : n == sizeof error ? error : EIO;
    } else {
      exec_error_ = ETIMEDOUT;
    }
  }
  ~ExecChild() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  ExecChild(const ExecChild &) = delete;
  ExecChild &operator=(const ExecChild &) = delete;

  pid_t pid() const noexcept { return pid_; }
  // 0 once argv runs; otherwise the errno of what failed.
  int exec_error() const noexcept { return exec_error_; }

 private:
  pid_t pid_ = -1;
  int exec_error_ = 0;
};

// ---- descendants ----------------------------------------------------------------------------

TEST(Descendants, FindsAChildAndItsGrandchild) {
  if (!fs::exists("/proc/self/task/" + std::to_string(::getpid()) + "/children")) {
    GTEST_SKIP() << "no /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN)";
  }
  Child child([] {
    const pid_t parent = ::getpid();
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(0);
      for (;;) ::pause();
    }
    return static_cast<int>(grandchild);
  });
  const auto grandchild = child.result();
  ASSERT_TRUE(grandchild && *grandchild > 0);
  EXPECT_EQ(sorted(descendants(kProc, ::getpid())), sorted({child.pid(), *grandchild}));
  EXPECT_EQ(descendants(kProc, child.pid()), std::vector<pid_t>{*grandchild});
  EXPECT_TRUE(descendants(kProc, *grandchild).empty());
  child.kill();
  EXPECT_TRUE(gone_within(*grandchild, 10s));
}

TEST(Descendants, FindsNothingBelowAGoneProcess) {
  Child child([] { return 0; });
  ASSERT_EQ(child.result(), 0);
  const pid_t pid = child.pid();
  child.kill();
  EXPECT_TRUE(descendants(kProc, pid).empty());
}

// ---- process_uid ----------------------------------------------------------------------------

TEST(ProcessUid, IsTheUidOfAProcessWhoseRealAndEffectiveUidsAgree) {
  EXPECT_EQ(process_uid(kProc, ::getpid()), ::geteuid());
  if (::geteuid() != 0) return;
  Child nobody([] { return become_nobody(false); });
  ASSERT_EQ(nobody.result(), 0);
  EXPECT_EQ(process_uid(kProc, nobody.pid()), kNobody);
}

TEST(ProcessUid, IsNoneForMixedUidsOrAGoneProcess) {
  if (::geteuid() == 0) {
    Child mixed([] { return ::setresuid(kNobody, 0, 0) == 0 ? 0 : -errno; });
    ASSERT_EQ(mixed.result(), 0);
    EXPECT_EQ(process_uid(kProc, mixed.pid()), std::nullopt);
  }
  Child gone([] { return 0; });
  ASSERT_EQ(gone.result(), 0);
  const pid_t pid = gone.pid();
  gone.kill();
  EXPECT_EQ(process_uid(kProc, pid), std::nullopt);
}

// ---- origin ---------------------------------------------------------------------------------

TEST(Origin, IsTheWorkingDirectoryOfAChildThatChangedIt) {
  test::TempFile marker("x");
  const fs::path dir = fs::canonical(marker.dir());
  const std::string where = dir.string();
  Child child([where] { return ::chdir(where.c_str()) == 0 ? 0 : -errno; });
  ASSERT_EQ(child.result(), 0);
  const Origin found = origin(kProc, child.pid(), {});
  EXPECT_EQ(found.cwd, where);
  EXPECT_TRUE(found.env.empty());
  EXPECT_EQ(origin(kProc, ::getpid(), {}).cwd, fs::current_path().string());
}

TEST(Origin, SelectsTheEnvironmentInTheKeysOrderAndLeavesMissingKeysOut) {
  test::TempFile marker("x");
  const std::string where = fs::canonical(marker.dir()).string();
  ExecChild child({"/bin/sleep", "60"},
                  {"FOOBAR=long", "PATH=/usr/bin:/bin", "FOO=short", "EQ=a=b", "EMPTY=", "NOEQUALS",
                   "BAR=last"},
                  [where] { return ::chdir(where.c_str()) == 0 ? 0 : errno; });
  ASSERT_EQ(child.exec_error(), 0) << std::generic_category().message(child.exec_error());
  const Origin found =
      origin(kProc, child.pid(),
             {"BAR", "FOO", "MISSING", "EQ", "FO", "FOOBAR", "EMPTY", "NOEQUALS", "OOBAR"});
  EXPECT_EQ(found.cwd, where);
  EXPECT_EQ(found.env,
            (std::vector<std::string>{"BAR=last", "FOO=short", "EQ=a=b", "FOOBAR=long", "EMPTY="}));
}

TEST(Origin, ThrowsForAGoneProcess) {
  Child child([] { return 0; });
  ASSERT_EQ(child.result(), 0);
  const pid_t pid = child.pid();
  child.kill();
  EXPECT_THROW(origin(kProc, pid, {}), std::system_error);
  EXPECT_THROW(origin(kProc, pid, {"PATH"}), std::system_error);
}

}  // namespace
}  // namespace sandbox_host::broker
