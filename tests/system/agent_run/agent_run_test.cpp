// The policy of an agent session enforced by sandbox-host's own backends: a command run
// with `sandbox-host run --policy` tries what a compromised agent would (read the home's
// keys, write outside the policy's Write, through symlinks and into the harness's config),
// under the namespaces and the Landlock backend, as root and as nobody. The same script run
// without the sandbox shows each attempt would succeed on its own.
#include "backend_case.hpp"
#include "fixtures.hpp"
#include "process.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace sandbox_host::test {
namespace {

namespace fs = std::filesystem;

using Case = BackendCase;
using User = BackendCase::User;

void write_file(const fs::path &path, const std::string &contents) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << contents;
}

std::string slurp(const fs::path &path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Each attempt prints "<name> yes" when it worked, "<name> no" when it did not; then the
// variables the command was given.
constexpr const char *kAttempts = R"(
try() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "$name yes"; else echo "$name no"; fi; }
try read_home_secret cat "$H/.ssh/id_ed25519"
try list_home_keys ls "$H/.ssh"
try read_listed_file cat "$H/.gitconfig"
try write_listed_file sh -c "echo x >> '$H/.gitconfig'"
try create_in_write sh -c "echo made > '$H/proj/made.txt'"
try change_in_write sh -c "echo changed > '$H/proj/old.txt'"
try remove_in_write rm "$H/proj/gone.txt"
try create_in_write_subdir sh -c "echo made > '$H/state/logs/made.txt'"
try create_beside_deny sh -c "echo made > '$H/state/made.txt'"
try read_deny cat "$H/state/scan/key"
try create_in_deny sh -c "echo x > '$H/state/scan/new'"
try create_in_home sh -c "echo x > '$H/dropped.txt'"
try create_outside_home sh -c "echo x > '$ELSEWHERE/dropped.txt'"
try read_outside_home cat "$ELSEWHERE/notes.txt"
try write_harness sh -c "echo x > '$H/.claude/settings.json'"
try read_harness_listed cat "$H/.claude/projects/p/notes.md"
try write_tool_write sh -c "echo x > '$H/.claude/projects/p/memory/m.md'"
try read_link_to_secret cat "$H/proj/key-link"
try read_runtime_secret cat "$R/bus-secret"
try read_egress cat "$R/clawpatrol-sandbox/egress/bundle.pem"
echo "HOME=$HOME"
echo "CLAWPATROL_SANDBOX=$CLAWPATROL_SANDBOX"
echo "SANDBOX_RUNTIME=$SANDBOX_RUNTIME"
echo "FOO=$FOO"
)";

std::map<std::string, std::string> outcomes(const std::string &out) {
  std::map<std::string, std::string> found;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const size_t at = line.find(line.find('=') != std::string::npos ? '=' : ' ');
    if (at != std::string::npos) found[line.substr(0, at)] = line.substr(at + 1);
  }
  return found;
}

class AgentRun : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: it launches as root and as nobody";
    // Under /var/tmp: the namespaces backend gives a command a /tmp of its own.
    std::string pattern = "/var/tmp/sandbox-host-agent-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    tree_ = pattern;
    fs::permissions(tree_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
    write_file(home() / ".ssh/id_ed25519", "PRIVATE KEY\n");
    write_file(home() / ".gitconfig", "[user]\n\tname = a\n");
    write_file(home() / "proj/old.txt", "old\n");
    write_file(home() / "proj/gone.txt", "gone\n");
    write_file(home() / "state/logs/.keep", "");
    write_file(home() / "state/scan/key", "SCAN KEY\n");
    write_file(home() / ".claude/settings.json", "{}\n");
    write_file(home() / ".claude/projects/p/notes.md", "notes\n");
    write_file(home() / ".claude/projects/p/memory/m.md", "memory\n");
    fs::create_symlink(home() / ".ssh/id_ed25519", home() / "proj/key-link");
    write_file(elsewhere() / "notes.txt", "elsewhere\n");
    write_file(runtime() / "bus-secret", "BUS\n");
    write_file(runtime() / "clawpatrol-sandbox/egress/bundle.pem", "CERTS\n");
    if (GetParam().user == User::nobody) {
      for (const auto &entry : fs::recursive_directory_iterator(tree_ / "u")) {
        ASSERT_EQ(::lchown(entry.path().c_str(), kNobody, kNobody), 0) << entry.path();
      }
      ASSERT_EQ(::lchown((tree_ / "u").c_str(), kNobody, kNobody), 0);
    }
    std::ofstream(tree_ / "policy.toml")
        << "home = \"" << home().string() << "\"\n"
        << "runtime = \"" << runtime().string() << "\"\n"
        << "egress = \"" << (runtime() / "clawpatrol-sandbox/egress").string() << "\"\n"
        << "read = [\"" << (home() / ".gitconfig").string() << "\", \""
        << (home() / ".claude/projects").string() << "\"]\n"
        << "write = [\"" << (home() / "proj").string() << "\", \"" << (home() / "state").string()
        << "\"]\n"
        << "deny = [\"" << (home() / "state/scan").string() << "\"]\n"
        << "harness = \"" << (home() / ".claude").string() << "\"\n"
        << "tool_write = [\"" << (home() / ".claude/projects/*/memory").string() << "\"]\n"
        << "[vars]\nFOO = \"bar\"\n";
    fs::permissions(tree_ / "policy.toml", fs::perms::owner_read | fs::perms::owner_write |
                                               fs::perms::group_read | fs::perms::others_read);
  }

  void TearDown() override {
    std::error_code ignored;
    if (!tree_.empty()) fs::remove_all(tree_, ignored);
  }

  fs::path home() const { return tree_ / "u/home"; }
  fs::path runtime() const { return tree_ / "u/run"; }
  fs::path elsewhere() const { return tree_ / "u/elsewhere"; }
  bool root() const { return GetParam().user == User::root; }

  std::vector<std::string> env() const {
    return {"PATH=/usr/bin:/bin", "HOME=/root",
            std::string("CLAWPATROL_SANDBOX_BACKEND=") + GetParam().backend};
  }

  // The script with the tree's paths set at its top: the sandbox passes no variable of the
  // launcher's on (BaseEnv).
  std::string with_paths(const std::string &script) const {
    return "H='" + home().string() + "'; R='" + runtime().string() + "'; ELSEWHERE='" +
           elsewhere().string() + "'\n" + script;
  }

  std::vector<std::string> as_user(std::vector<std::string> argv) const {
    if (root()) return argv;
    std::vector<std::string> out = as_nobody();
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }

  ProcessResult run_with_policy(const std::string &script) const {
    const std::string exe = root() ? SANDBOX_HOST_EXE : shared_install().sandbox_host();
    return run_process(
        as_user({exe, "run", "--config", config_.path().string(), "--policy",
                 (tree_ / "policy.toml").string(), "--", "/bin/sh", "-c", with_paths(script)}),
        options());
  }

  ProcessResult run_bare(const std::string &script) const {
    return run_process(as_user({"/bin/sh", "-c", with_paths(script)}), options());
  }

  // Started in the tree, as a user starts an agent in a directory of theirs: the test's own
  // working directory is the build tree's, which nobody may not reach (a checkout in root's
  // 0700 home), and the command starts where it was launched.
  ProcessOptions options() const {
    ProcessOptions options = with_env(env());
    options.cwd = tree_.string();
    return options;
  }

  TempFile config_{"[plugins.sh]\n", "config.toml"};
  fs::path tree_;
};

TEST_P(AgentRun, HoldsACommandToThePolicy) {
  const ProcessResult held = run_with_policy(kAttempts);
  ASSERT_EQ(held.code, 0) << held.out << held.err;
  const auto got = outcomes(held.out);
  const bool landlock = std::string(GetParam().backend) == "landlock";
  const std::map<std::string, std::string> expected{
      {"read_home_secret", "no"},
      {"list_home_keys", "no"},
      {"read_listed_file", "yes"},
      {"write_listed_file", "no"},
      {"create_in_write", "yes"},
      {"change_in_write", "yes"},
      {"remove_in_write", "yes"},
      {"create_in_write_subdir", "yes"},
      // Landlock cannot grant a right on a directory without granting it on everything
      // below, where Deny lies: the entries of state itself stay as they are
      // (docs/agent-policy.md).
      {"create_beside_deny", landlock ? "no" : "yes"},
      {"read_deny", "no"},
      {"create_in_deny", "no"},
      {"create_in_home", "no"},
      {"create_outside_home", "no"},
      {"read_outside_home", "yes"},
      {"write_harness", "no"},
      {"read_harness_listed", "yes"},
      {"write_tool_write", "no"},
      {"read_link_to_secret", "no"},
      {"read_runtime_secret", "no"},
      {"read_egress", "yes"},
      {"HOME", home().string()},
      {"CLAWPATROL_SANDBOX", "1"},
      {"SANDBOX_RUNTIME", "1"},
      {"FOO", "bar"}};
  for (const auto &[attempt, outcome] : expected) {
    EXPECT_EQ(got.count(attempt) ? got.at(attempt) : "(missing)", outcome)
        << attempt << (landlock ? " under landlock" : " under namespaces") << "\n"
        << held.out << held.err;
  }
  // What the command could do reached the host; what it could not left no trace.
  EXPECT_EQ(slurp(home() / "proj/made.txt"), "made\n");
  EXPECT_EQ(slurp(home() / "proj/old.txt"), "changed\n");
  EXPECT_FALSE(fs::exists(home() / "proj/gone.txt"));
  EXPECT_FALSE(fs::exists(home() / "dropped.txt"));
  EXPECT_FALSE(fs::exists(elsewhere() / "dropped.txt"));
  EXPECT_FALSE(fs::exists(home() / "state/scan/new"));
  EXPECT_EQ(slurp(home() / ".gitconfig"), "[user]\n\tname = a\n");
  EXPECT_EQ(slurp(home() / ".claude/settings.json"), "{}\n");
  EXPECT_EQ(slurp(home() / ".claude/projects/p/memory/m.md"), "memory\n");
}

// The control: the same user without the sandbox does everything the policy refuses.
TEST_P(AgentRun, WithoutTheSandboxEveryAttemptWorks) {
  const ProcessResult bare = run_bare(kAttempts);
  ASSERT_EQ(bare.code, 0) << bare.out << bare.err;
  const auto got = outcomes(bare.out);
  for (const char *attempt :
       {"read_home_secret", "write_listed_file", "read_deny", "create_in_deny", "create_in_home",
        "create_outside_home", "write_harness", "write_tool_write", "read_link_to_secret",
        "read_runtime_secret"}) {
    EXPECT_EQ(got.count(attempt) ? got.at(attempt) : "(missing)", "yes") << attempt << bare.out;
  }
}

TEST_P(AgentRun, MakesAMissingDenyPathBeforeTheLaunch) {
  fs::remove_all(home() / "state/scan");
  const ProcessResult held = run_with_policy("echo started");
  EXPECT_EQ(held.out, "started\n") << held.err;
  EXPECT_EQ(held.code, 0) << held.err;
  EXPECT_TRUE(fs::is_directory(home() / "state/scan"));
}

INSTANTIATE_TEST_SUITE_P(Backends, AgentRun, ::testing::ValuesIn(kLinuxBackendCases),
                         backend_case_name);

}  // namespace
}  // namespace sandbox_host::test

namespace sandbox_host::test {
namespace {

// What `run --policy` refuses before anything is launched: each exits 125 naming the cause.
class AgentRunRefusal : public ::testing::Test {
 protected:
  ProcessResult run(const std::string &config, const std::string &policy,
                    std::vector<std::string> extra = {}) {
    TempFile config_file(config, "config.toml");
    TempFile policy_file(policy, "policy.toml");
    std::vector<std::string> argv{SANDBOX_HOST_EXE, "run",
                                  "--config",       config_file.path().string(),
                                  "--policy",       policy_file.path().string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (const char *arg : {"--", "/bin/true"}) argv.push_back(arg);
    policy_path_ = policy_file.path().string();
    return run_process(argv, with_env({"PATH=/usr/bin:/bin"}));
  }
  std::string policy_path_;
};

TEST_F(AgentRunRefusal, ABadPolicyIsNamedByFileLineAndEntry) {
  const ProcessResult result =
      run("", "home = \"/home/u\"\nwrite = [\"/home/u/src\", \"src/x\"]\n");
  EXPECT_EQ(result.code, 125);
  EXPECT_NE(result.err.find(policy_path_ + ":2: write[1]: \"src/x\" is not an absolute path"),
            std::string::npos)
      << result.err;
}

TEST_F(AgentRunRefusal, TheOffBackendIsRefusedRatherThanRunUnconfined) {
  const ProcessResult result =
      run("[plugins.true]\nsandbox = \"off\"\n", "home = \"/nonexistent-home\"\n");
  EXPECT_EQ(result.code, 125);
  EXPECT_NE(result.err.find("the off backend confines nothing; it is refused rather than run "
                            "unconfined"),
            std::string::npos)
      << result.err;
}

TEST_F(AgentRunRefusal, APreparedSandboxIsRefused) {
  const ProcessResult result = run("", "home = \"/nonexistent-home\"\n", {"--prepared"});
  EXPECT_EQ(result.code, 125);
  EXPECT_NE(result.err.find("--prepared and --policy"), std::string::npos) << result.err;
}

TEST_F(AgentRunRefusal, AllowEntriesAreReadAsTheProxyReadsThem) {
  // Ports, case, a trailing dot and names below a "*." domain are within the domains...
  const std::string domains =
      "home = \"/nonexistent-home\"\n"
      "domains = [\"github.com\", \"*.packages.example.com\"]\n";
  const ProcessResult within = run(
      "[egress]\nsocket = \"/nonexistent/egress.sock\"\n"
      "allow = [\"github.com:443\", \"GitHub.com.\", \"registry.packages.example.com:443,8443\", "
      "\"*.cdn.packages.example.com\", \"*.packages.example.com\"]\n",
      domains);
  // It gets as far as the sandbox, which finds no proxy listening.
  EXPECT_EQ(within.code, 87) << within.err;
  EXPECT_NE(within.err.find("the egress proxy's socket /nonexistent/egress.sock does not exist"),
            std::string::npos)
      << within.err;
  // ...a subdomain wildcard over a bare domain, or the apex of a "*." one, is not.
  const ProcessResult wider =
      run("[egress]\nallow = [\"*.github.com\", \"packages.example.com:443\"]\n", domains);
  EXPECT_EQ(wider.code, 125);
  EXPECT_NE(wider.err.find("allows *.github.com, packages.example.com:443, which the policy"),
            std::string::npos)
      << wider.err;
}

TEST_F(AgentRunRefusal, HarnessWithoutAPolicyIsRefused) {
  const ProcessResult result = run_process(
      {SANDBOX_HOST_EXE, "run", "--harness", "--", "/bin/true"}, with_env({"PATH=/usr/bin:/bin"}));
  EXPECT_EQ(result.code, 125);
  EXPECT_NE(result.err.find("--harness holds a harness to a policy: give --policy too"),
            std::string::npos)
      << result.err;
}

TEST_F(AgentRunRefusal, AnEgressProxyThatAllowsMoreThanTheDomainsIsRefused) {
  const ProcessResult result =
      run("[egress]\nallow = [\"github.com\", \"example.org\", \"*.packages.example.com\"]\n",
          "home = \"/nonexistent-home\"\ndomains = [\"github.com\", \"*.packages.example.com\"]\n");
  EXPECT_EQ(result.code, 125);
  EXPECT_NE(result.err.find("allows example.org, which the policy " + policy_path_ +
                            " does not list in domains"),
            std::string::npos)
      << result.err;
}

TEST_F(AgentRunRefusal, AnEgressModuleWhoseAllowListThePolicyCannotReadIsRefused) {
  const ProcessResult result =
      run("module_dirs = [\"" + std::string(TEST_MODULE_DIR) + "\", \"" +
              std::string(BUILD_MODULE_DIR) +
              "\"]\n[egress]\nimplementation = \"connect\"\n[egress.connect]\n"
              "socket = \"/nonexistent/connect.sock\"\nallow = [\"github.com:443\"]\n",
          "home = \"/nonexistent-home\"\ndomains = [\"github.com\"]\n");
  EXPECT_EQ(result.code, 125);
  EXPECT_NE(result.err.find("is the module connect, whose allow list the policy " + policy_path_ +
                            " cannot check against its domains"),
            std::string::npos)
      << result.err;
  // Without the policy's proxying, the command may still run without a network.
  const ProcessResult offline =
      run("module_dirs = [\"" + std::string(TEST_MODULE_DIR) + "\", \"" +
              std::string(BUILD_MODULE_DIR) +
              "\"]\n[egress]\nimplementation = \"connect\"\n[egress.connect]\n"
              "socket = \"/nonexistent/connect.sock\"\nallow = [\"github.com:443\"]\n",
          "home = \"/nonexistent-home\"\ndomains = [\"github.com\"]\n", {"--network", "none"});
  EXPECT_EQ(offline.code, 0) << offline.err;
}

}  // namespace
}  // namespace sandbox_host::test
