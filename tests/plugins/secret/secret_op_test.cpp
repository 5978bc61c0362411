#include "command_op_fixture.hpp"

namespace ops_test {
namespace {

using SecretOp = CommandOpTest;

TEST_F(SecretOp, RunsTheSecretCommandMarkedAsBrokered) {
  Op secret("secret", with_command({{"args", {"secret"}}}));
  Call call = ask({"get", "db/password"});
  call.requester_env = {"SOPS_AGE_KEY_FILE=/home/u/.age"};
  const auto command = ran(secret.handle(call));
  EXPECT_EQ(command.path, tool);
  EXPECT_EQ(command.args, (std::vector<std::string>{"secret", "get", "db/password"}));
  auto env = base_env();
  env.insert(env.end(), {"SOPS_AGE_KEY_FILE=/home/u/.age", "CLAWPATROL_SANDBOX_BROKERED=1",
                         "CLAWPATROL_SANDBOX=1"});
  EXPECT_EQ(command.env, env);
  EXPECT_EQ(command.timeout, std::chrono::milliseconds(300000));
}

// The marks tell the command who runs it; neither operator nor requester may take them off.
TEST_F(SecretOp, ItsMarksWinOverTheOperatorsAndTheRequesters) {
  Op secret("secret", with_command({{"env", {"CLAWPATROL_SANDBOX=0"}}}));
  Call call = ask();
  call.requester_env = {"CLAWPATROL_SANDBOX_BROKERED=0"};
  auto env = base_env();
  env.insert(env.end(), {"CLAWPATROL_SANDBOX_BROKERED=1", "CLAWPATROL_SANDBOX=1"});
  EXPECT_EQ(ran(secret.handle(call)).env, env);
}

TEST_F(SecretOp, RefusesAnArgumentTheOperatorsPatternDoesNot) {
  Op secret("secret", with_command({{"arg_pattern", {"^[a-z]+$"}}}));
  EXPECT_EQ(refusal_of(secret.handle(ask({"get", "x;"}))),
            "secret: argument 2 (\"x;\") does not match arg_pattern ^[a-z]+$");
}

TEST_F(SecretOp, PassesItsInputWhenTheOperatorAllowsIt) {
  Op secret("secret", with_command({{"input", {"true"}}}));
  Call call = ask({"set", "token"});
  call.request.input = "s3cret\n";
  EXPECT_EQ(ran(secret.handle(call)).input, "s3cret\n");
}

TEST_F(SecretOp, RefusesInputByDefault) {
  Op secret("secret", with_command());
  Call call = ask({"set", "token"});
  call.request.input = "s3cret\n";
  EXPECT_EQ(refusal_of(secret.handle(call)), "secret: takes no input (ops.secret.input is false)");
}

}  // namespace
}  // namespace ops_test
