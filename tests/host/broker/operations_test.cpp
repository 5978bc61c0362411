// The host-command operations through the real broker: what the command gets (argv,
// environment, stdin, working directory) and what the client gets back (out, err, code).
#include "served_broker.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

namespace sandbox_host::test {
namespace {

// Prints its arguments, working directory and environment to stdout, its stdin to stderr,
// and exits with the last of its arguments that is a number (0 without one).
constexpr const char *kReportScript = R"sh(#!/bin/sh
code=0
for a in "$@"; do echo "arg=$a"; case $a in [0-9]*) code=$a ;; esac; done
echo "cwd=$(pwd)"
env | sort | sed 's/^/env /'
cat >&2
exit "$code"
)sh";

class Operations : public testing::TestWithParam<unsigned> {
 protected:
  Operations()
      : canary_("SANDBOX_HOST_TEST_BROKER_CANARY", "leaked"), broker_([] {
          BrokerSetup setup = setup_for(GetParam());
          setup.ops = {"ping", "secret", "vault", "agents"};
          setup.scripts = {{"report.sh", kReportScript}, {"session", "s3cr3t-session"}};
          setup.op_tables =
              "[ops.secret]\ncommand = \"{root}/report.sh\"\nargs = [\"fixed\"]\ninput = true\n"
              "cwd = \"requester\"\nrequester_env = [\"ASKER_HINT\"]\n"
              "[ops.vault]\nsession_file = \"{root}/session\"\n"
              "[ops.agents]\ncommand = \"{root}/report.sh\"\narg_pattern = \"^[a-z0-9]+$\"\n";
          return setup;
        }()) {}

  ScopedEnv canary_;
  ServedBroker broker_;
};

TEST_P(Operations, SecretRunsTheConfiguredCommandWithArgvEnvInputAndCode) {
  const auto input = broker_.root() / "input";
  std::ofstream(input) << "payload\n";
  std::vector<std::string> argv = broker_.as_user();
  for (const std::string &arg :
       {std::string("/usr/bin/env"), std::string("ASKER_HINT=from the asker"),
        std::string("ASKER_OTHER=not selected"), broker_.sandbox_host(), std::string("ask"),
        std::string("secret"), std::string("--arg"), std::string("3"), std::string("--arg"),
        std::string("two words; $(no shell)"), std::string("--input-file"), input.string(),
        std::string("--spool"), broker_.spool().string()}) {
    argv.push_back(arg);
  }
  // Asked from root(): the command's working directory must be the asker's.
  std::vector<std::string> in_dir{"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"",
                                  broker_.root().string()};
  in_dir.insert(in_dir.end(), argv.begin(), argv.end());
  auto result = run_process(in_dir);
  EXPECT_EQ(result.code, 3) << result.err;
  const auto out = lines(result.out);
  EXPECT_EQ(std::vector<std::string>(out.begin(), out.begin() + 3),
            (std::vector<std::string>{"arg=fixed", "arg=3", "arg=two words; $(no shell)"}));
  EXPECT_EQ(field(result.out, "cwd"), broker_.root().string());
  EXPECT_NE(result.out.find("env CLAWPATROL_SANDBOX_BROKERED=1\n"), std::string::npos);
  EXPECT_NE(result.out.find("env CLAWPATROL_SANDBOX=1\n"), std::string::npos);
  EXPECT_NE(result.out.find("env ASKER_HINT=from the asker\n"), std::string::npos);
  EXPECT_EQ(result.out.find("ASKER_OTHER"), std::string::npos) << "an unselected variable came";
  EXPECT_EQ(result.out.find("SANDBOX_HOST_TEST_BROKER_CANARY"), std::string::npos)
      << "the broker's own environment leaked";
  EXPECT_EQ(result.err, "payload\n");
}

TEST_P(Operations, ArgumentRulesRefuseBeforeAnythingRuns) {
  auto result = broker_.ask({"agents", "--arg", "../../etc"});
  EXPECT_EQ(result.code, 126);
  EXPECT_EQ(result.err,
            "sandbox-host ask: refused: agents: \"../../etc\" is not an allowed "
            "subcommand; allowed: start, wake, resume\n");
  EXPECT_EQ(broker_.ask({"agents", "--arg", "start"}).code, 0);
}

TEST_P(Operations, VaultSaysHeldWithoutTheSession) {
  ::chown((broker_.root() / "session").c_str(), GetParam(), GetParam());
  ::chmod((broker_.root() / "session").c_str(), 0600);
  auto held = broker_.ask({"vault"});
  EXPECT_EQ(held.code, 0) << held.err;
  EXPECT_EQ(held.out, "held\n");
  EXPECT_EQ((held.out + held.err).find("s3cr3t"), std::string::npos);
  ::chmod((broker_.root() / "session").c_str(), 0644);
  auto open = broker_.ask({"vault"});
  EXPECT_EQ(open.code, 1);
  EXPECT_EQ(open.out, "none\n");
  EXPECT_EQ((open.out + open.err).find("s3cr3t"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Broker, Operations, testing::Values(0u, kNobody),
                         [](const testing::TestParamInfo<unsigned> &info) {
                           return info.param == 0 ? std::string("Root") : std::string("Nobody");
                         });

}  // namespace
}  // namespace sandbox_host::test
