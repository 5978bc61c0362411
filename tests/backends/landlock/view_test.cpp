// An agent policy's view (Spec::view) held by the landlock backend. Each test launches real
// commands (sh, cat, touch, ls, and unix_probe for what a shell cannot try) through the host
// API with CLAWPATROL_SANDBOX_BACKEND=landlock, as root and as nobody, on a temporary tree
// standing in for a home directory: the home hidden, a directory and a file in it readable,
// a project written in, with a deny and a read-only vendor tree inside. The tree belongs to
// the launching user, so only the sandbox stands in the way of what is refused. The gaps the
// probe's warning names for a view are checked to exist (WarningSaysTruly_*).
#include "coverage_warning.hpp"
#include "fixtures.hpp"
#include "landlock_abi.hpp"
#include "process.hpp"

#include <sandbox_host/host/host.hpp>
#include <sandbox_host/sandboxtest.hpp>

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace sandbox_host {
namespace {

namespace fs = std::filesystem;
using test::ProcessResult;
using namespace std::chrono_literals;

enum class User { root, nobody };

std::string user_name(const ::testing::TestParamInfo<User> &info) {
  return info.param == User::root ? "root" : "nobody";
}

std::string slurp(const fs::path &path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write_file(const fs::path &path, const std::string &contents) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << contents;
}

// sandbox-host and its modules where nobody can run them, with unix_probe beside: made once
// per process and removed at its exit (ctest runs every test in a process of its own, so a
// copy left behind would be one per test).
struct ViewInstall : test::UnprivilegedInstall {
  ViewInstall() { add_binary(UNIX_PROBE); }
};
const test::UnprivilegedInstall &install() {
  static const ViewInstall made;
  return made;
}

// Changes the test's working directory, which the launch inherits, and restores it.
class ScopedCwd {
 public:
  explicit ScopedCwd(const fs::path &dir) : previous_(fs::current_path()) { fs::current_path(dir); }
  ~ScopedCwd() {
    std::error_code ignored;
    fs::current_path(previous_, ignored);
  }
  ScopedCwd(const ScopedCwd &) = delete;
  ScopedCwd &operator=(const ScopedCwd &) = delete;

 private:
  fs::path previous_;
};

// A unix socket the launching user listens on, outside every write rule.
class UnixListener {
 public:
  explicit UnixListener(const fs::path &path)
      : fd_(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0)) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    listening_ = fd_ >= 0 &&
                 ::bind(fd_, reinterpret_cast<const sockaddr *>(&address), sizeof address) == 0 &&
                 ::chmod(path.c_str(), 0777) == 0 && ::listen(fd_, 4) == 0;
  }
  ~UnixListener() { ::close(fd_); }
  UnixListener(const UnixListener &) = delete;
  UnixListener &operator=(const UnixListener &) = delete;

  bool listening() const { return listening_; }
  // Whether a connection is waiting (it is taken off the queue).
  bool connected() const {
    const int accepted = ::accept(fd_, nullptr, nullptr);
    if (accepted < 0) return false;
    ::close(accepted);
    return true;
  }

 private:
  int fd_;
  bool listening_ = false;
};

class LandlockView : public ::testing::TestWithParam<User> {
 protected:
  LandlockView() : tree_("", "unused"), spec_("agent", "/bin/sh") {}

  void SetUp() override {
    if (landlock::kernel_abi() < 1) GTEST_SKIP() << "no Landlock on this kernel";
    root_ = fs::canonical(tree_.dir());
    fs::permissions(root_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
    write_file(home() / "secret.txt", "home-secret\n");
    write_file(home() / "docs/a.txt", "doc\n");
    write_file(home() / "notes.txt", "notes\n");
    write_file(proj() / "src/main.c", "int main;\n");
    write_file(proj() / "src/old.c", "old\n");
    write_file(proj() / "README", "readme\n");
    write_file(proj() / ".state/scan/found", "scan-secret\n");
    write_file(proj() / "vendor/lib.c", "lib\n");
    write_file(outside() / "data.txt", "outside\n");
    fs::create_symlink(home() / "secret.txt", proj() / "src/to-secret");
    // In a directory whose entries are granted one by one.
    fs::create_symlink(home() / "secret.txt", proj() / "to-secret");
    if (GetParam() == User::nobody) {
      for (const auto &entry : fs::recursive_directory_iterator(root_)) {
        ASSERT_EQ(::lchown(entry.path().c_str(), test::kNobody, test::kNobody), 0) << entry.path();
      }
      ASSERT_EQ(::chown(root_.c_str(), test::kNobody, test::kNobody), 0);
      spec_.chown_to(test::kNobody, test::kNobody);
    }
    spec_.spec.view = {
        {home().string(), PathAccess::none},
        {(home() / "docs").string(), PathAccess::read},
        {(home() / "notes.txt").string(), PathAccess::read},
        {proj().string(), PathAccess::write},
        {(proj() / ".state/scan").string(), PathAccess::none},
        {(proj() / "vendor").string(), PathAccess::read},
    };
  }

  fs::path home() const { return root_ / "home"; }
  fs::path proj() const { return root_ / "home/proj"; }
  fs::path outside() const { return root_ / "outside"; }
  fs::path tmp_dir() const { return spec_.spec.tmp_dir; }

  // argv that runs argv as the launching user.
  std::vector<std::string> as_user(std::vector<std::string> argv) const {
    if (GetParam() == User::root) return argv;
    std::vector<std::string> prefixed = test::as_nobody();
    prefixed.insert(prefixed.end(), argv.begin(), argv.end());
    return prefixed;
  }

  // What the host launches for spec with the landlock backend forced, as the launching user
  // runs it: stage 1 is the installed sandbox-host, which the host re-executes as itself.
  struct HostLaunch {
    std::vector<std::string> argv, env;
  };
  HostLaunch host_launch(const Spec &spec) const {
    const test::ScopedEnv forced("CLAWPATROL_SANDBOX_BACKEND", "landlock");
    Config config = test::test_config({"landlock"}, {"landlock"});
    config.module_dirs = {(install().dir() / SANDBOX_HOST_MODULE_SUBDIR).string()};
    // The command runs as nobody, who may not join a cgroup this root host makes (the launch
    // would fail closed); tests/host/limits covers the cgroups.
    if (GetParam() == User::nobody) config.cgroup = "off";
    Host host(config);
    const std::string mode = host.mode_for(spec.plugin_name);
    EXPECT_EQ(mode, "landlock");
    const LaunchCommand command = host.command(spec, mode);
    std::vector<std::string> argv{install().sandbox_host()};
    argv.insert(argv.end(), command.args.begin(), command.args.end());
    return {as_user(argv), command.env};
  }

  // spec run to its end from cwd.
  ProcessResult launch(const Spec &spec, const fs::path &cwd) const {
    const HostLaunch launch = host_launch(spec);
    const ScopedCwd in(cwd);
    return test::run_process(launch.argv, test::with_env(launch.env));
  }

  // A shell script under the view, from cwd (the tree's root unless given).
  ProcessResult sh(const std::string &script, const fs::path &cwd = {}) const {
    Spec spec = spec_.spec;
    spec.args = {"-c", script};
    return launch(spec, cwd.empty() ? root_ : cwd);
  }

  // unix_probe's line under the view.
  std::string probe(std::vector<std::string> args) const {
    Spec spec = spec_.spec;
    spec.binary_path = (install().dir() / "bin" / fs::path(UNIX_PROBE).filename()).string();
    spec.args = std::move(args);
    ProcessResult result = launch(spec, root_);
    EXPECT_EQ(result.code, 0) << result.err;
    return result.out;
  }

  const test::TempFile tree_;
  sandboxtest::TempSpec spec_;
  fs::path root_;
};

// The exit status and stderr of a command that the sandbox refused.
::testing::AssertionResult Refused(const ProcessResult &result) {
  if (result.code != 0 && result.err.find("Permission denied") != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "exit " << result.code << "\nstdout: " << result.out << "\nstderr: " << result.err;
}

::testing::AssertionResult Ran(const ProcessResult &result) {
  if (result.code == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "exit " << result.code << "\nstdout: " << result.out << "\nstderr: " << result.err;
}

::testing::AssertionResult WarningNames(const std::string &gap) {
  const std::string warning = landlock::coverage_warning(landlock::kernel_abi());
  if (warning.find(gap) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "the warning does not name \"" << gap << "\": " << warning;
}

TEST_P(LandlockView, TheHomeCannotBeReadOrListed) {
  EXPECT_TRUE(Refused(sh("cat " + (home() / "secret.txt").string())));
  EXPECT_TRUE(Refused(sh("ls " + home().string())));
  // The launching user reads it without the sandbox.
  EXPECT_TRUE(Ran(test::run_process(as_user({"/bin/cat", (home() / "secret.txt").string()}))));
}

TEST_P(LandlockView, ReadRulesInTheHomeAreReadableNotWritable) {
  ProcessResult read = sh("cat " + (home() / "docs/a.txt").string() + " " +
                          (home() / "notes.txt").string() + " && ls " + (home() / "docs").string());
  EXPECT_TRUE(Ran(read));
  EXPECT_EQ(read.out, "doc\nnotes\na.txt\n");
  EXPECT_TRUE(Refused(sh("echo more >> " + (home() / "notes.txt").string())));
  EXPECT_TRUE(Refused(sh("echo more >> " + (home() / "docs/a.txt").string())));
  EXPECT_TRUE(Refused(sh("touch " + (home() / "docs/new").string())));
  EXPECT_EQ(slurp(home() / "notes.txt"), "notes\n");
  EXPECT_EQ(slurp(home() / "docs/a.txt"), "doc\n");
  EXPECT_FALSE(fs::exists(home() / "docs/new"));
}

TEST_P(LandlockView, TheWriteRuleIsWrittenInItsSubdirectories) {
  const fs::path src = proj() / "src";
  ProcessResult written =
      sh("set -e; cd " + src.string() +
         "; echo new > new.c; echo more >> main.c; rm old.c; mkdir sub; touch sub/f; mv new.c "
         "sub/moved.c; echo changed > ../README; cat main.c");
  ASSERT_TRUE(Ran(written));
  EXPECT_EQ(written.out, "int main;\nmore\n");
  EXPECT_EQ(slurp(src / "main.c"), "int main;\nmore\n");
  EXPECT_EQ(slurp(src / "sub/moved.c"), "new\n");
  EXPECT_TRUE(fs::exists(src / "sub/f"));
  EXPECT_FALSE(fs::exists(src / "old.c"));
  EXPECT_FALSE(fs::exists(src / "new.c"));
  EXPECT_EQ(slurp(proj() / "README"), "changed\n");
}

TEST_P(LandlockView, ADenyInsideTheWriteRuleIsUnreadableAndNothingIsMadeInIt) {
  const fs::path scan = proj() / ".state/scan";
  EXPECT_TRUE(Refused(sh("cat " + (scan / "found").string())));
  EXPECT_TRUE(Refused(sh("ls " + scan.string())));
  EXPECT_TRUE(Refused(sh("touch " + (scan / "planted").string())));
  EXPECT_TRUE(Refused(sh("mkdir " + (scan / "dir").string())));
  EXPECT_TRUE(Refused(sh("rm " + (scan / "found").string())));
  EXPECT_FALSE(fs::exists(scan / "planted"));
  EXPECT_FALSE(fs::exists(scan / "dir"));
  EXPECT_EQ(slurp(scan / "found"), "scan-secret\n");
}

TEST_P(LandlockView, AReadRuleInsideTheWriteRuleIsReadOnly) {
  const fs::path vendor = proj() / "vendor";
  ProcessResult read = sh("cat " + (vendor / "lib.c").string());
  EXPECT_TRUE(Ran(read));
  EXPECT_EQ(read.out, "lib\n");
  EXPECT_TRUE(Refused(sh("echo more >> " + (vendor / "lib.c").string())));
  EXPECT_TRUE(Refused(sh("touch " + (vendor / "new").string())));
  EXPECT_TRUE(Refused(sh("rm " + (vendor / "lib.c").string())));
  EXPECT_EQ(slurp(vendor / "lib.c"), "lib\n");
  EXPECT_FALSE(fs::exists(vendor / "new"));
}

TEST_P(LandlockView, OutsideTheRulesTheHostIsReadableNotWritable) {
  ProcessResult read =
      sh("cat /etc/hostname " + (outside() / "data.txt").string() + " && ls " + outside().string());
  EXPECT_TRUE(Ran(read));
  EXPECT_EQ(read.out, slurp("/etc/hostname") + "outside\ndata.txt\n");
  // The launching user's own directory, and the host's world-writable ones.
  const std::string name = "sandbox-host-view-" + std::to_string(::getpid());
  for (const fs::path &target : {outside() / "new", fs::path("/tmp") / name,
                                 fs::path("/var/tmp") / name, fs::path("/dev/shm") / name}) {
    EXPECT_TRUE(Refused(sh("touch " + target.string()))) << target;
    EXPECT_FALSE(fs::exists(target)) << target << " appeared on the host";
    std::error_code ignored;
    fs::remove(target, ignored);
  }
  EXPECT_TRUE(Refused(sh("echo more >> " + (outside() / "data.txt").string())));
  EXPECT_EQ(slurp(outside() / "data.txt"), "outside\n");
  // TmpDir is written as for a plugin.
  EXPECT_TRUE(Ran(sh("echo scratch > " + (tmp_dir() / "f").string())));
  EXPECT_EQ(slurp(tmp_dir() / "f"), "scratch\n");
}

TEST_P(LandlockView, SymlinksInTheWriteRuleLeadNowhereHidden) {
  const fs::path src = proj() / "src";
  EXPECT_TRUE(Refused(sh("cat " + (src / "to-secret").string())));
  EXPECT_TRUE(Refused(sh("cat " + (proj() / "to-secret").string())));
  // One the command makes itself: made, but it reads nothing through it.
  EXPECT_TRUE(Refused(sh("cd " + src.string() + " && ln -s ../../secret.txt mine && cat mine")));
  EXPECT_TRUE(fs::is_symlink(src / "mine"));
  EXPECT_TRUE(Refused(sh("echo overwritten > " + (src / "to-secret").string())));
  EXPECT_EQ(slurp(home() / "secret.txt"), "home-secret\n");
}

TEST_P(LandlockView, UnixSocketsOfTheHostAreRefusedASocketPairWorks) {
  const fs::path path = outside() / "agent.sock";
  UnixListener agent(path);
  ASSERT_TRUE(agent.listening()) << std::strerror(errno);
  // Without the sandbox the launching user reaches it.
  ProcessResult unconfined = test::run_process(
      as_user({install().dir() / "bin" / fs::path(UNIX_PROBE).filename(), "connect", path}));
  ASSERT_EQ(unconfined.out, "connect ok\n") << unconfined.err;
  ASSERT_TRUE(agent.connected());

  EXPECT_EQ(probe({"connect", path.string()}), "connect EPERM\n");
  EXPECT_FALSE(agent.connected());
  EXPECT_EQ(probe({"socketpair"}), "socketpair ok\n");
}

TEST_P(LandlockView, TheCommandStartsWhereItWasLaunchedUnlessTheViewHidesIt) {
  const fs::path src = proj() / "src";
  ProcessResult in_src = sh("pwd && cat main.c", src);
  EXPECT_TRUE(Ran(in_src));
  EXPECT_EQ(in_src.out, src.string() + "\nint main;\n");
  // The project cannot be listed (below), but what is in it can be used.
  ProcessResult in_proj = sh("pwd && cat README", proj());
  EXPECT_TRUE(Ran(in_proj));
  EXPECT_EQ(in_proj.out, proj().string() + "\nreadme\n");
  // The hidden home is not a place to start: TmpDir is.
  ProcessResult in_home = sh("pwd", home());
  EXPECT_TRUE(Ran(in_home));
  EXPECT_EQ(in_home.out, tmp_dir().string() + "\n");
}

// ---- the gaps the warning names ----------------------------------------------------------

TEST_P(LandlockView, WarningSaysTruly_TheWayToALowerRuleCannotBeListedOrChanged) {
  ASSERT_TRUE(
      WarningNames("run --policy: a directory above a narrower rule cannot be listed, nor "
                   "changed in it"));
  EXPECT_TRUE(Refused(sh("ls " + proj().string())));
  EXPECT_TRUE(Refused(sh("touch " + (proj() / "new-at-top").string())));
  EXPECT_TRUE(Refused(sh("rm " + (proj() / "README").string())));
  EXPECT_TRUE(Refused(sh("mv " + (proj() / "src").string() + " " + (proj() / "src2").string())));
  EXPECT_FALSE(fs::exists(proj() / "new-at-top"));
  EXPECT_TRUE(fs::exists(proj() / "README"));
  EXPECT_TRUE(fs::exists(proj() / "src"));
}

TEST_P(LandlockView, WarningSaysTruly_AnEntryMadeAfterTheStartGetsNothing) {
  ASSERT_TRUE(WarningNames("an entry made after the start, at the top level too, gets nothing"));
  // The command waits (boundedly) for an entry of the tree's root that the test makes once
  // the command runs: stat(2) sees it, reading it is refused.
  const fs::path later = root_ / "later";
  Spec spec = spec_.spec;
  spec.args = {"-c", "echo started; i=0; while [ ! -e " + (later / "f").string() +
                         " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; cat " +
                         (later / "f").string()};
  const HostLaunch launch = host_launch(spec);
  const ScopedCwd in(root_);
  test::RunningProcess running(launch.argv, test::with_env(launch.env));
  ASSERT_EQ(running.read_line(10s).value_or("<nothing>"), "started");
  write_file(later / "f", "later\n");
  if (GetParam() == User::nobody) {
    ASSERT_EQ(::chown(later.c_str(), test::kNobody, test::kNobody), 0);
    ASSERT_EQ(::chown((later / "f").c_str(), test::kNobody, test::kNobody), 0);
  }
  EXPECT_TRUE(Refused(running.wait(20s)));
}

INSTANTIATE_TEST_SUITE_P(AsUser, LandlockView, ::testing::Values(User::root, User::nobody),
                         user_name);

}  // namespace
}  // namespace sandbox_host
