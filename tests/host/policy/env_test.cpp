// `sandbox-host env --unheld` evaluated by real shells (dash as /bin/sh, and bash), as a
// shell's rc file runs it: an unheld session's policy variables are gone afterwards, a held
// one (SANDBOX_RUNTIME set) or one without CLAWPATROL_SANDBOX keeps its environment.
#include "agent_tree.hpp"
#include "process.hpp"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

namespace sandbox_host::agent_hook_test {
namespace {

std::set<std::string> lines(const std::string &text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.insert(line);
  return out;
}

class EnvTest : public ::testing::TestWithParam<std::string> {
 protected:
  EnvTest() { tree.write_policy(); }

  // The environment a shell has after evaluating the command's output, one NAME=value a line.
  test::ProcessResult eval_in_shell(std::vector<std::string> env) {
    env.push_back("PATH=/usr/bin:/bin");
    env.push_back("SANDBOX_HOST=" + std::string(SANDBOX_HOST_EXE));
    env.push_back("POLICY=" + tree.policy_file());
    return test::run_process(
        {GetParam(), "-c",
         "eval \"$(\"$SANDBOX_HOST\" env --unheld --policy \"$POLICY\")\" && env"},
        test::with_env(env));
  }

  std::vector<std::string> policy_environment() {
    return {"CLAWPATROL_SANDBOX=1",
            "SSL_CERT_FILE=" + tree.at("run/user/egress/bundle.pem"),
            "GIT_CONFIG_COUNT=4",
            "GIT_CONFIG_KEY_0=url.https://github.com/.insteadOf",
            "GH_CONFIG_DIR=" + tree.at("run/user/egress/gh"),
            "GOFLAGS=-mod=mod"};
  }

  AgentTree tree;
};

TEST_P(EnvTest, AnUnheldSessionDropsThePolicyVariables) {
  auto env = policy_environment();
  env.push_back("EDITOR=vi");
  const auto result = eval_in_shell(env);
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  const auto after = lines(result.out);
  for (const auto &variable : policy_environment()) {
    EXPECT_FALSE(after.contains(variable)) << variable << " is still set";
  }
  EXPECT_TRUE(after.contains("EDITOR=vi")) << "a variable of the user's own is gone";
}

TEST_P(EnvTest, AHeldOrUnconfinedSessionKeepsItsEnvironment) {
  for (const std::string extra : {"SANDBOX_RUNTIME=1", "CLAWPATROL_SANDBOX_BROKERED=1"}) {
    auto env = policy_environment();
    env.push_back(extra);
    const auto result = eval_in_shell(env);
    ASSERT_EQ(result.code, 0) << result.err;
    const auto after = lines(result.out);
    for (const auto &variable : policy_environment()) {
      EXPECT_TRUE(after.contains(variable)) << variable << " dropped with " << extra;
    }
  }
  // Without CLAWPATROL_SANDBOX the command prints nothing at all.
  const auto plain = test::run_process(
      {SANDBOX_HOST_EXE, "env", "--unheld", "--policy", tree.policy_file()},
      test::with_env({"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt", "PATH=/usr/bin:/bin"}));
  EXPECT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out, "");
  const auto held =
      test::run_process({SANDBOX_HOST_EXE, "env", "--unheld", "--policy", tree.policy_file()},
                        test::with_env({"CLAWPATROL_SANDBOX=1", "SANDBOX_RUNTIME=1"}));
  EXPECT_EQ(held.code, 0) << held.err;
  EXPECT_EQ(held.out, "");
}

TEST_P(EnvTest, WithoutAPolicyTheVariablesEveryPolicySetsStillGo) {
  tree.write_policy("home = \"not absolute\"\n");
  const auto result = eval_in_shell(policy_environment());
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.err.find("sandbox-host env: " + tree.policy_file()), std::string::npos)
      << result.err;
  const auto after = lines(result.out);
  for (const std::string gone : {"CLAWPATROL_SANDBOX=1", "GIT_CONFIG_COUNT=4"}) {
    EXPECT_FALSE(after.contains(gone)) << gone;
  }
  EXPECT_FALSE(after.contains("SSL_CERT_FILE=" + tree.at("run/user/egress/bundle.pem")));
  // The policy's own vars are unknown without it.
  EXPECT_TRUE(after.contains("GOFLAGS=-mod=mod"));
}

INSTANTIATE_TEST_SUITE_P(Shells, EnvTest, ::testing::Values("/bin/sh", "/bin/bash"),
                         [](const auto &info) { return info.param == "/bin/sh" ? "sh" : "bash"; });

}  // namespace
}  // namespace sandbox_host::agent_hook_test
