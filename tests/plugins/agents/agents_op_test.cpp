#include "command_op_fixture.hpp"

namespace ops_test {
namespace {

using AgentsOp = CommandOpTest;

TEST_F(AgentsOp, RunsStartWakeAndResume) {
  Op agents("agents", with_command({{"args", {"agents"}}}));
  for (const std::string sub : {"start", "wake", "resume"}) {
    EXPECT_EQ(ran(agents.handle(ask({sub, "reviewer"}))).args,
              (std::vector<std::string>{"agents", sub, "--", "reviewer"}));
  }
}

TEST_F(AgentsOp, RefusesAnotherSubcommand) {
  Op agents("agents", with_command());
  EXPECT_EQ(refusal_of(agents.handle(ask({"stop", "reviewer"}))),
            "agents: \"stop\" is not an allowed subcommand; allowed: start, wake, resume");
}

TEST_F(AgentsOp, RefusesARequestWithoutASubcommand) {
  Op agents("agents", with_command());
  EXPECT_EQ(refusal_of(agents.handle(ask())),
            "agents: a subcommand is required; allowed: start, wake, resume");
}

TEST_F(AgentsOp, TakesTheOperatorsSubcommandsInstead) {
  Op agents("agents", with_command({{"subcommands", {"wake"}}}));
  ran(agents.handle(ask({"wake"})));
  EXPECT_EQ(refusal_of(agents.handle(ask({"start"}))),
            "agents: \"start\" is not an allowed subcommand; allowed: wake");
}

TEST_F(AgentsOp, TakesAnySubcommandWhenTheOperatorListsNone) {
  Op agents("agents", with_command({{"subcommands", {}}}));
  EXPECT_EQ(ran(agents.handle(ask({"stop"}))).args, (std::vector<std::string>{"--", "stop"}));
  ran(agents.handle(ask()));
}

TEST_F(AgentsOp, HoldsTheSubcommandToThePatternToo) {
  Op agents("agents",
            with_command({{"subcommands", {"start", "Wake"}}, {"arg_pattern", {"[a-z]+"}}}));
  EXPECT_EQ(refusal_of(agents.handle(ask({"Wake"}))),
            "agents: argument 1 (\"Wake\") does not match arg_pattern [a-z]+");
}

}  // namespace
}  // namespace ops_test
