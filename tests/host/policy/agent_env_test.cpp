// Environment hygiene: the egress variables as real git reads them, the unset line as dash
// and bash run it, and when a session counts as unheld.
#include "fixtures.hpp"
#include "process.hpp"

#include <sandbox_host/host/policy/agent_env.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace sandbox_host::policy {
namespace {

namespace fs = std::filesystem;
using sandbox_host::test::run_process;
using sandbox_host::test::TempFile;
using sandbox_host::test::with_env;

std::vector<std::string> as_env(const std::map<std::string, std::string> &vars) {
  std::vector<std::string> out;
  for (const auto &[name, value] : vars) out.push_back(name + "=" + value);
  return out;
}

Policy policy_with(const std::string &egress, std::map<std::string, std::string> vars = {}) {
  Policy policy;
  policy.home = "/home/u";
  policy.egress = egress;
  policy.vars = std::move(vars);
  return policy;
}

TEST(AgentEnv, EgressVariables) {
  const std::map<std::string, std::string> expected{
      {"CURL_CA_BUNDLE", "/run/e/bundle.pem"},
      {"GH_CONFIG_DIR", "/run/e/gh"},
      {"GIT_CONFIG_COUNT", "4"},
      {"GIT_CONFIG_KEY_0", "url.https://github.com/.insteadOf"},
      {"GIT_CONFIG_KEY_1", "url.https://github.com/.insteadOf"},
      {"GIT_CONFIG_KEY_2", "credential.https://github.com.helper"},
      {"GIT_CONFIG_KEY_3", "gpg.program"},
      {"GIT_CONFIG_VALUE_0", "git@github.com:"},
      {"GIT_CONFIG_VALUE_1", "ssh://git@github.com/"},
      {"GIT_CONFIG_VALUE_2", ""},
      {"GIT_CONFIG_VALUE_3", "/run/e/gpg"},
      {"GIT_SSL_CAINFO", "/run/e/bundle.pem"},
      {"NODE_EXTRA_CA_CERTS", "/run/e/ca.pem"},
      {"REQUESTS_CA_BUNDLE", "/run/e/bundle.pem"},
      {"SSL_CERT_FILE", "/run/e/bundle.pem"},
  };
  EXPECT_EQ(egress_vars("/run/e"), expected);
  EXPECT_TRUE(egress_vars("").empty());
}

// git run with the egress variables alone (no config file of the test's user or system).
class GitWithEgressVars : public ::testing::Test {
 protected:
  sandbox_host::test::ProcessResult git(const std::vector<std::string> &args) const {
    auto env = as_env(egress_vars("/run/e"));
    env.push_back("HOME=" + home_.dir().string());
    env.push_back("PATH=/usr/bin:/bin");
    env.push_back("GIT_CONFIG_NOSYSTEM=1");
    std::vector<std::string> argv{"/usr/bin/git", "-C", home_.dir().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, with_env(env));
  }

  TempFile home_{"", "unused"};
};

TEST_F(GitWithEgressVars, ConfigHoldsEachSetting) {
  auto result = git({"config", "--get-all", "url.https://github.com/.insteadof"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "git@github.com:\nssh://git@github.com/\n");
  result = git({"config", "--get-all", "credential.https://github.com.helper"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "\n");
  result = git({"config", "--get", "gpg.program"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "/run/e/gpg\n");
}

TEST_F(GitWithEgressVars, GitHubSshRemotesGoOverHttps) {
  ASSERT_EQ(git({"init", "-q"}).code, 0);
  ASSERT_EQ(git({"remote", "add", "scp", "git@github.com:owner/repo.git"}).code, 0);
  ASSERT_EQ(git({"remote", "add", "ssh", "ssh://git@github.com/owner/repo.git"}).code, 0);
  ASSERT_EQ(git({"remote", "add", "other", "git@gitlab.com:owner/repo.git"}).code, 0);
  EXPECT_EQ(git({"remote", "get-url", "scp"}).out, "https://github.com/owner/repo.git\n");
  EXPECT_EQ(git({"remote", "get-url", "ssh"}).out, "https://github.com/owner/repo.git\n");
  EXPECT_EQ(git({"remote", "get-url", "other"}).out, "git@gitlab.com:owner/repo.git\n");
}

TEST(AgentEnv, EnvironmentIsVarsEgressAndTheMarker) {
  const Policy policy =
      policy_with("/run/e", {{"GIT_CONFIG_GLOBAL", "/home/u/g"}, {"SSL_CERT_FILE", "/mine.pem"}});
  auto expected = egress_vars("/run/e");
  expected["GIT_CONFIG_GLOBAL"] = "/home/u/g";
  expected["CLAWPATROL_SANDBOX"] = "1";
  // The egress directory's bundle wins over a var of the same name: the proxy's CA must be
  // trusted for anything to get out.
  EXPECT_EQ(policy.environment(), expected);
  EXPECT_EQ(policy_with("").environment(),
            (std::map<std::string, std::string>{{"CLAWPATROL_SANDBOX", "1"}}));
}

TEST(AgentEnv, UnheldTruthTable) {
  struct Row {
    const char *sandbox, *runtime, *brokered;
    bool unheld;
  };
  const Row rows[] = {
      {nullptr, nullptr, nullptr, false},
      {"1", nullptr, nullptr, true},
      {"1", "1", nullptr, false},
      {"1", nullptr, "1", false},
      {"1", "1", "1", false},
      {nullptr, "1", nullptr, false},
      {nullptr, nullptr, "1", false},
      {"", nullptr, nullptr, false},
      {"1", "", "", true},
  };
  for (const auto &row : rows) {
    auto getenv = [&](const char *name) -> const char * {
      const std::string_view n(name);
      if (n == kEnvSandbox) return row.sandbox;
      if (n == kEnvRuntime) return row.runtime;
      if (n == kEnvBrokered) return row.brokered;
      return "unrelated";
    };
    EXPECT_EQ(unheld(getenv), row.unheld)
        << "sandbox=" << (row.sandbox ? row.sandbox : "(unset)")
        << " runtime=" << (row.runtime ? row.runtime : "(unset)")
        << " brokered=" << (row.brokered ? row.brokered : "(unset)");
  }
}

TEST(AgentEnv, UnsetNamesAreSortedOnce) {
  const Policy policy = policy_with("/run/e", {{"ZED", "z"}, {"SSL_CERT_FILE", "/x"}});
  auto names = unset_names(policy);
  std::vector<std::string> expected;
  for (const auto &[name, value] : egress_vars("/run/e")) expected.push_back(name);
  expected.push_back("CLAWPATROL_SANDBOX");
  expected.push_back("ZED");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names, expected);
  EXPECT_EQ(unset_names(policy_with("")), (std::vector<std::string>{"CLAWPATROL_SANDBOX"}));
  EXPECT_EQ(unset_shell(policy_with("", {{"A", "1"}})), "unset -v 'A' 'CLAWPATROL_SANDBOX'\n");
}

TEST(AgentEnv, UnsetShellRunsInDashAndBash) {
  const Policy policy = policy_with("/run/e", {{"GIT_CONFIG_GLOBAL", "/home/u/g"}});
  auto env = as_env(policy.environment());
  env.push_back("UNRELATED=kept");
  env.push_back("PATH=/usr/bin:/bin");
  for (const auto *shell : {"/bin/sh", "/bin/bash"}) {
    const auto result =
        run_process({shell, "-c", "eval \"$1\" && env", "sh", unset_shell(policy)}, with_env(env));
    ASSERT_EQ(result.code, 0) << shell << ": " << result.err;
    EXPECT_NE(result.out.find("UNRELATED=kept\n"), std::string::npos) << shell;
    for (const auto &name : unset_names(policy)) {
      EXPECT_EQ(result.out.find(name + "="), std::string::npos) << shell << " kept " << name;
    }
  }
}

TEST(AgentEnv, UnsetShellQuotesWhateverNamesItHolds) {
  TempFile dir("", "unused");
  const fs::path marker = dir.dir() / "ran";
  // A name nobody validated: eval must read it as a word, never run it.
  const Policy policy = policy_with("", {{"$(touch " + marker.string() + ")", "x"}, {"a'b", "y"}});
  EXPECT_EQ(unset_shell(policy),
            "unset -v '$(touch " + marker.string() + ")' 'CLAWPATROL_SANDBOX' 'a'\\''b'\n");
  for (const auto *shell : {"/bin/sh", "/bin/bash"}) {
    run_process({shell, "-c", "eval \"$1\"", "sh", unset_shell(policy)});
    EXPECT_FALSE(fs::exists(marker)) << shell;
  }
}

TEST(AgentEnv, UnconfineDropsTheVariablesOnly) {
  const Policy policy = policy_with("/run/e", {{"POLICY_TEST_VAR", "1"}});
  std::vector<std::unique_ptr<sandbox_host::test::ScopedEnv>> set;
  for (const auto &[name, value] : policy.environment()) {
    set.push_back(std::make_unique<sandbox_host::test::ScopedEnv>(name, value));
  }
  sandbox_host::test::ScopedEnv unrelated("POLICY_TEST_UNRELATED", "kept");
  unconfine(policy);
  for (const auto &name : unset_names(policy))
    EXPECT_EQ(std::getenv(name.c_str()), nullptr) << name;
  ASSERT_NE(std::getenv("POLICY_TEST_UNRELATED"), nullptr);
  EXPECT_STREQ(std::getenv("POLICY_TEST_UNRELATED"), "kept");
}

}  // namespace
}  // namespace sandbox_host::policy
