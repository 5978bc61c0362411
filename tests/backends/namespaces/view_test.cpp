// An agent policy's view (Spec::view) with the namespaces backend: real commands (sh, cat,
// ls, touch, python3) launched through the host's library path (Host::command), as root and
// as nobody, and through a prepared sandbox, on a stand-in for a home directory under
// /var/tmp, which the sandbox, unlike /tmp, shows as the host has it.
#include "escape_harness.hpp"
#include "fixtures.hpp"
#include "process.hpp"
#include "stand_in_proxy.hpp"

#include <sandbox_host/host/backend.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/sandbox_pool.hpp>
#include <sandbox_host/host/spawn.hpp>
#include <sandbox_host/sandboxtest.hpp>

#include <gtest/gtest.h>

#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace sandbox_host {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::escape::Listener;
using test::escape::slurp;

enum class User { root, nobody };

void PrintTo(User user, std::ostream *out) {
  *out << (user == User::root ? "root" : "nobody");
}

// The home directory a policy hides, with what it re-allows inside:
//   home/                      none
//     secret                   (no rule: hidden with home)
//     .gitconfig               read
//     docs/readme              read
//     proj/                    write
//       file.txt, old.txt
//       link-to-secret -> ../secret
//       .env                   none
//       .state/scan/token      none
//       harness/settings.json  read
//   outside/agent.sock         (no rule: the host's root, read-only)
class HomeTree {
 public:
  explicit HomeTree(unsigned owner) {
    std::string pattern = "/var/tmp/sandbox-host-view-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
    }
    root_ = fs::canonical(pattern);
    fs::permissions(root_, test::escape::kWorldReadableDir);
    for (const auto &dir :
         {home(), home() / "docs", proj(), proj() / ".state/scan", proj() / "harness", outside()}) {
      fs::create_directories(dir);
    }
    write(home() / "secret", "home-secret\n");
    write(home() / ".gitconfig", "[user]\n\tname = agent\n");
    write(home() / "docs/readme", "docs-readme\n");
    write(proj() / "file.txt", "first\n");
    write(proj() / "old.txt", "old\n");
    write(proj() / ".env", "API_KEY=secret\n");
    write(proj() / ".state/scan/token", "scan-token\n");
    write(proj() / "harness/settings.json", "{}\n");
    fs::create_symlink("../secret", proj() / "link-to-secret");
    // The launching user's own, and readable by it on the host: only the view stands between.
    for (const auto &entry : fs::recursive_directory_iterator(root_)) {
      if (::lchown(entry.path().c_str(), owner, owner) != 0) {
        throw std::system_error(errno, std::generic_category(), "lchown " + entry.path().string());
      }
      if (!entry.is_symlink() && entry.is_directory()) {
        fs::permissions(entry.path(), test::escape::kWorldReadableDir);
      }
    }
  }
  ~HomeTree() {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }
  HomeTree(const HomeTree &) = delete;
  HomeTree &operator=(const HomeTree &) = delete;

  fs::path home() const { return root_ / "home"; }
  fs::path proj() const { return home() / "proj"; }
  fs::path outside() const { return root_ / "outside"; }

  std::vector<PathRule> view() const {
    return {{home().string(), PathAccess::none},
            {(home() / ".gitconfig").string(), PathAccess::read},
            {(home() / "docs").string(), PathAccess::read},
            {proj().string(), PathAccess::write},
            {(proj() / ".env").string(), PathAccess::none},
            {(proj() / ".state/scan").string(), PathAccess::none},
            {(proj() / "harness").string(), PathAccess::read}};
  }

 private:
  static void write(const fs::path &path, const std::string &contents) {
    test::escape::write_file(path, contents, test::escape::kWorldReadable);
  }
  fs::path root_;
};

// Changes the test's working directory, which a launch inherits, until destroyed.
class ScopedWorkingDirectory {
 public:
  explicit ScopedWorkingDirectory(const fs::path &dir) : previous_(fs::current_path()) {
    fs::current_path(dir);
  }
  ~ScopedWorkingDirectory() {
    std::error_code ignored;
    fs::current_path(previous_, ignored);
  }
  ScopedWorkingDirectory(const ScopedWorkingDirectory &) = delete;
  ScopedWorkingDirectory &operator=(const ScopedWorkingDirectory &) = delete;

 private:
  fs::path previous_;
};

std::string sh() {
  return fs::canonical("/bin/sh").string();
}

class NamespacesView : public ::testing::TestWithParam<User> {
 protected:
  // sandbox-host's modules and this very binary (stage 1 re-executes it) where nobody can
  // run them.
  static void SetUpTestSuite() {
    install_ = new test::UnprivilegedInstall();
    self_ = new std::string(install_->add_binary(fs::read_symlink("/proc/self/exe").string()));
  }
  static void TearDownTestSuite() {
    delete install_;
    delete self_;
    install_ = nullptr;
    self_ = nullptr;
  }

  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: it launches as root and as nobody";
    Config config = audit_.apply(test::test_config({"namespaces"}, {"namespaces"}));
    config.module_dirs = {install_->dir() / SANDBOX_HOST_MODULE_SUBDIR};
    // The commands run as nobody, who may not join a cgroup this root host makes (the launch
    // would fail closed); tests/host/limits covers the cgroups.
    if (GetParam() == User::nobody) config.cgroup = "off";
    host_ = std::make_unique<Host>(std::move(config));
    for (const BackendStatus &status : host_->probe_all()) {
      if (!status.available) GTEST_SKIP() << "namespaces does not work here: " << status.reason;
    }
    tree_ = std::make_unique<HomeTree>(uid());
    if (nobody()) t_.chown_to(test::kNobody, test::kNobody);
    t_.spec.view = tree_->view();
  }

  bool nobody() const { return GetParam() == User::nobody; }
  unsigned uid() const { return nobody() ? test::kNobody : 0u; }

  // Runs script with sh -c in a sandbox holding it to the view, launched from cwd; $1 is the
  // home directory, $2 the project.
  test::ProcessResult run(const std::string &script, const fs::path &cwd = "/") const {
    Spec spec = t_.spec;
    spec.binary_path = sh();
    spec.args = {"-c", script, "sh", tree_->home().string(), tree_->proj().string()};
    return launch(spec, cwd);
  }

  // From / unless told: the test's own directory may be one nobody cannot enter.
  test::ProcessResult launch(const Spec &spec, const fs::path &cwd = "/") const {
    return start(host_->command(spec, "namespaces"), cwd);
  }

  test::ProcessResult start(const LaunchCommand &command, const fs::path &cwd = "/") const {
    ScopedWorkingDirectory in(cwd);
    std::vector<std::string> argv;
    if (nobody()) argv = test::as_nobody();
    argv.push_back(nobody() ? *self_ : command.program);
    argv.insert(argv.end(), command.args.begin(), command.args.end());
    test::ProcessOptions options = test::with_env(command.env);
    options.timeout = 20s;
    return test::run_process(argv, options);
  }

  static inline test::UnprivilegedInstall *install_ = nullptr;
  static inline std::string *self_ = nullptr;
  test::AuditCapture audit_;
  std::unique_ptr<Host> host_;
  std::unique_ptr<HomeTree> tree_;
  sandboxtest::TempSpec t_{"view", "/bin/sh"};
};

// What a launch did, for a failure's message.
std::string shown(const test::ProcessResult &r) {
  return "exit " + std::to_string(r.code) + " signal " + std::to_string(r.signal) +
         (r.timed_out ? " (timed out)" : "") + "\nstdout:\n" + r.out + "stderr:\n" + r.err;
}

// Whether a command succeeded, as one word per line of the script's output.
const std::string kTry = "try() { if \"$@\" >/dev/null 2>&1; then echo yes; else echo no; fi; }\n";

TEST_P(NamespacesView, TheHiddenHomeShowsOnlyWhatTheViewReAllows) {
  test::ProcessResult r = run(kTry +
                              "try cat \"$1/secret\"\n"
                              "try touch \"$1/new\"\n"
                              "try mkdir \"$1/newdir\"\n"
                              "ls -A \"$1\"\n");
  ASSERT_EQ(r.code, 0) << shown(r);
  EXPECT_EQ(r.out, "no\nno\nno\n.gitconfig\ndocs\nproj\n") << shown(r);
  EXPECT_FALSE(fs::exists(tree_->home() / "new"));
  EXPECT_EQ(slurp(tree_->home() / "secret"), "home-secret\n");
}

TEST_P(NamespacesView, ReadRulesAreReadableAndNotWritable) {
  test::ProcessResult r = run(kTry +
                              "cat \"$1/.gitconfig\" \"$1/docs/readme\"\n"
                              "try sh -c 'echo more >> \"$1/.gitconfig\"' sh \"$1\"\n"
                              "try touch \"$1/docs/new\"\n"
                              "try rm \"$1/docs/readme\"\n");
  ASSERT_EQ(r.code, 0) << shown(r);
  EXPECT_EQ(r.out, "[user]\n\tname = agent\ndocs-readme\nno\nno\nno\n") << shown(r);
  EXPECT_EQ(slurp(tree_->home() / ".gitconfig"), "[user]\n\tname = agent\n");
  EXPECT_TRUE(fs::exists(tree_->home() / "docs/readme"));
}

TEST_P(NamespacesView, AWriteRuleLetsTheCommandCreateModifyAndDelete) {
  test::ProcessResult r =
      run("set -e\n"
          "echo created > \"$2/new.txt\"\n"
          "echo second >> \"$2/file.txt\"\n"
          "rm \"$2/old.txt\"\n"
          "mkdir \"$2/dir\" && echo nested > \"$2/dir/nested\"\n"
          "echo done\n");
  ASSERT_EQ(r.code, 0) << shown(r);
  EXPECT_EQ(r.out, "done\n");
  EXPECT_EQ(slurp(tree_->proj() / "new.txt"), "created\n");
  EXPECT_EQ(slurp(tree_->proj() / "file.txt"), "first\nsecond\n");
  EXPECT_FALSE(fs::exists(tree_->proj() / "old.txt"));
  EXPECT_EQ(slurp(tree_->proj() / "dir/nested"), "nested\n");
}

TEST_P(NamespacesView, ADeniedPathInsideTheWriteRuleCanBeNeitherReadNorWritten) {
  test::ProcessResult r = run(kTry +
                              "try cat \"$2/.state/scan/token\"\n"
                              "try touch \"$2/.state/scan/new\"\n"
                              "try mkdir \"$2/.state/scan/dir\"\n"
                              "ls -A \"$2/.state/scan\"\n"
                              "try cat \"$2/.env\"\n"
                              "try sh -c 'echo x > \"$1/.env\"' sh \"$2\"\n"
                              "try rm \"$2/.env\"\n"
                              "echo end\n");
  ASSERT_EQ(r.code, 0) << shown(r);
  EXPECT_EQ(r.out, "no\nno\nno\nno\nno\nno\nend\n") << shown(r);
  EXPECT_EQ(slurp(tree_->proj() / ".state/scan/token"), "scan-token\n");
  EXPECT_EQ(slurp(tree_->proj() / ".env"), "API_KEY=secret\n");
  EXPECT_FALSE(fs::exists(tree_->proj() / ".state/scan/new"));
  EXPECT_FALSE(fs::exists(tree_->proj() / ".state/scan/dir"));
}

TEST_P(NamespacesView, AReadRuleInsideAWriteRuleIsReadableAndNotWritable) {
  test::ProcessResult r = run(kTry +
                              "cat \"$2/harness/settings.json\"\n"
                              "try sh -c 'echo x > \"$1/harness/settings.json\"' sh \"$2\"\n"
                              "try touch \"$2/harness/new\"\n");
  ASSERT_EQ(r.code, 0) << shown(r);
  EXPECT_EQ(r.out, "{}\nno\nno\n") << shown(r);
  EXPECT_EQ(slurp(tree_->proj() / "harness/settings.json"), "{}\n");
  EXPECT_FALSE(fs::exists(tree_->proj() / "harness/new"));
}

TEST_P(NamespacesView, OutsideTheRulesTheHostIsReadableAndReadOnly) {
  // The host's /tmp stays private, as for a plugin.
  test::escape::ScopedPath host_tmp("/tmp/sandbox-host-view-host-" + test::escape::random_suffix());
  test::escape::write_file(host_tmp.path(), "host-tmp\n", test::escape::kWorldReadable);
  Spec spec = t_.spec;
  spec.binary_path = sh();
  spec.args = {"-c",
               kTry +
                   "cat /etc/hostname\n"
                   "touch \"$1/new\" 2>&1 | grep -c 'Read-only file system'\n"
                   "try touch /usr/sandbox-host-view-test\n"
                   "try cat \"$2\"\n"
                   "echo scratch > /tmp/scratch && cat /tmp/scratch\n",
               "sh", tree_->outside().string(), host_tmp.path().string()};
  test::ProcessResult r = launch(spec);
  ASSERT_EQ(r.code, 0) << shown(r);
  EXPECT_EQ(r.out, slurp("/etc/hostname") + "1\nno\nno\nscratch\n") << shown(r);
  EXPECT_FALSE(fs::exists(tree_->outside() / "new"));
  EXPECT_FALSE(fs::exists("/usr/sandbox-host-view-test"));
}

TEST_P(NamespacesView, ASymlinkInTheWriteRuleDoesNotReachTheHiddenSecret) {
  ASSERT_EQ(slurp(tree_->proj() / "link-to-secret"), "home-secret\n") << "readable on the host";
  test::ProcessResult r = run(kTry + "try cat \"$2/link-to-secret\"\n");
  ASSERT_EQ(r.code, 0) << shown(r);
  EXPECT_EQ(r.out, "no\n") << shown(r);
}

TEST_P(NamespacesView, TheCommandStartsInTheLaunchersDirectoryWhereTheViewShowsIt) {
  {
    test::ProcessResult r = run("pwd; cat file.txt", tree_->proj());
    ASSERT_EQ(r.code, 0) << shown(r);
    EXPECT_EQ(r.out, tree_->proj().string() + "\nfirst\n");
  }
  {
    test::ProcessResult r = run("pwd", tree_->home());
    ASSERT_EQ(r.code, 0) << shown(r);
    EXPECT_EQ(r.out, t_.spec.tmp_dir + "\n") << "a hidden directory is no place to start";
  }
}

TEST_P(NamespacesView, NoUnixSocketCanBeOpenedButASocketPairWorks) {
  const fs::path agent = tree_->outside() / "agent.sock";
  std::unique_ptr<Listener> listener;
  ASSERT_TRUE(test::escape::listen_unix(listener, agent.string(), false));
  Spec spec = t_.spec;
  spec.binary_path = fs::canonical("/usr/bin/python3").string();
  spec.args = {"-c",
               "import errno, os, socket, stat, sys\n"
               "print('visible', stat.S_ISSOCK(os.stat(sys.argv[1]).st_mode))\n"
               "try:\n"
               "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
               "    s.connect(sys.argv[1])\n"
               "    print('connected')\n"
               "except OSError as e:\n"
               "    print('refused', errno.errorcode[e.errno])\n"
               "a, b = socket.socketpair()\n"
               "a.sendall(b'ping')\n"
               "print('pair', b.recv(4).decode())\n",
               agent.string()};
  test::ProcessResult r = launch(spec);
  ASSERT_EQ(r.code, 0) << shown(r);
  EXPECT_EQ(r.out, "visible True\nrefused EPERM\npair ping\n") << shown(r);
  EXPECT_FALSE(test::escape::anything_arrived(*listener));
}

TEST_P(NamespacesView, TheRelayToTheEgressProxyStillWorks) {
  // The unix socket filter is the command's alone: the init's relay opens a unix socket to the
  // proxy for every connection.
  test::Requests seen;
  const fs::path socket = tree_->outside() / "egress.sock";
  test::StandInProxy proxy(socket.string(), test::http_responder(seen));
  Spec spec = t_.spec;
  spec.network = Network::proxied;
  spec.proxy_socket = socket.string();
  spec.proxy_port = 3128;
  spec.binary_path = fs::canonical("/usr/bin/curl").string();
  spec.args = {"-sS", "http://example.test/x"};
  test::ProcessResult r = launch(spec);
  ASSERT_EQ(r.code, 0) << shown(r);
  EXPECT_EQ(r.out, "stand-in saw GET http://example.test/x HTTP/1.1\n");
  EXPECT_EQ(seen.heads().size(), 1u);
}

TEST_P(NamespacesView, AMountThatFailsNamesItsRule) {
  // Gone between the host's check of the Spec and the sandbox's mounts.
  const LaunchCommand command = [&] {
    Spec spec = t_.spec;
    spec.binary_path = sh();
    spec.args = {"-c", "echo ran"};
    return host_->command(spec, "namespaces");
  }();
  fs::remove_all(tree_->home() / "docs");
  test::ProcessResult r = start(command);
  EXPECT_EQ(r.code, 87) << shown(r);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(
      r.err.find("clawpatrol-sandbox: view: rule read " + (tree_->home() / "docs").string() + ": "),
      std::string::npos)
      << shown(r);
}

TEST_P(NamespacesView, RulesOnTheSandboxsOwnDirectoriesAreRefused) {
  for (const PathRule &rule :
       {PathRule{"/proc", PathAccess::read}, PathRule{"/dev/shm", PathAccess::write},
        PathRule{"/", PathAccess::write}}) {
    Spec spec = t_.spec;
    spec.view.push_back(rule);
    try {
      host_->command(spec, "namespaces");
      ADD_FAILURE() << "accepted " << rule.path;
    } catch (const std::exception &e) {
      EXPECT_NE(std::string(e.what()).find("view rule " + std::string(to_string(rule.access)) +
                                           " " + rule.path + ": "),
                std::string::npos)
          << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AsUser, NamespacesView, ::testing::Values(User::root, User::nobody),
                         [](const ::testing::TestParamInfo<User> &info) {
                           return ::testing::PrintToString(info.param);
                         });

// Reads fd until every writer has closed it, for at most 20 s; nullopt when that ran out.
std::optional<std::string> read_to_end(int fd) {
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd ready{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&ready, 1, static_cast<int>(left.count())) <= 0) {
      return std::nullopt;
    }
    char buffer[4096];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) return text;
    text.append(buffer, static_cast<size_t>(n));
  }
}

// A sandbox prepared before its launch has built the plugin's tree already; a launch with a
// view gets the view all the same.
TEST(NamespacesPreparedView, APreparedSandboxHoldsTheCommandToTheView) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: the pool runs in the test's process";
  test::AuditCapture audit;
  Host host(audit.apply(test::test_config({"namespaces"}, {"namespaces"})));
  for (const BackendStatus &status : host.probe_all()) {
    if (!status.available) GTEST_SKIP() << "namespaces does not work here: " << status.reason;
  }
  HomeTree tree(0);
  SandboxPool pool(host, "namespaces", Network::none);
  ASSERT_EQ(pool.wait_ready(20s), 1u);

  sandboxtest::TempSpec t("view", "/bin/sh");
  t.spec.view = tree.view();
  t.spec.args = {"-c",
                 kTry +
                     "try cat \"$1/secret\"\ncat \"$1/.gitconfig\"\necho new > \"$2/new.txt\"\n"
                     "try touch \"$2/harness/new\"\n",
                 "sh", tree.home().string(), tree.proj().string()};
  test::Pipe out = test::make_pipe();
  Child child = pool.launch(t.spec, {STDIN_FILENO, out.write.get(), STDERR_FILENO});
  out.write.reset();
  const std::optional<std::string> printed = read_to_end(out.read.get());
  const ExitStatus status = child.wait();
  ASSERT_TRUE(printed) << "the command did not finish";
  EXPECT_EQ(status.shell_status(), 0);
  EXPECT_EQ(*printed, "no\n[user]\n\tname = agent\nno\n");
  EXPECT_EQ(slurp(tree.proj() / "new.txt"), "new\n");
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
}

}  // namespace
}  // namespace sandbox_host
