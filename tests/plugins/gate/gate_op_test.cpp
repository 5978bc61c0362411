#include "command_op_fixture.hpp"

namespace ops_test {
namespace {

using GateOp = CommandOpTest;

// The wait is the gate's own option: before "--" and the gated command's arguments.
TEST_F(GateOp, PutsTheWaitBeforeTheRequestsArguments) {
  Op gate("gate", with_command({{"args", {"gate"}}, {"wait_arg", {"--wait"}}}));
  Call call = ask({"merge", "42"});
  call.request.wait = "15m";
  EXPECT_EQ(ran(gate.handle(call)).args,
            (std::vector<std::string>{"gate", "--wait", "15m", "--", "merge", "42"}));
}

TEST_F(GateOp, AddsNothingWithoutAWait) {
  Op gate("gate", with_command({{"wait_arg", {"--wait"}}}));
  EXPECT_EQ(ran(gate.handle(ask({"merge", "42"}))).args,
            (std::vector<std::string>{"--", "merge", "42"}));
}

TEST_F(GateOp, RefusesAWaitWithoutWaitArg) {
  Op gate("gate", with_command());
  Call call = ask({"merge"});
  call.request.wait = "5s";
  EXPECT_EQ(refusal_of(gate.handle(call)), "gate: takes no wait: ops.gate.wait_arg is not set");
}

TEST_F(GateOp, RefusesAMalformedWait) {
  Op gate("gate", with_command({{"wait_arg", {"--wait"}}}));
  for (const std::string wait : {"5", "5 m", "1234567s", "-5m", "5d", "5m; id"}) {
    Call call = ask({"merge"});
    call.request.wait = wait;
    EXPECT_EQ(refusal_of(gate.handle(call)),
              "gate: wait \"" + wait + "\" does not match ^[0-9]{1,6}(ms|s|m|h)$");
  }
  for (const std::string wait : {"250ms", "30s", "999999m", "2h"}) {
    Call call = ask({"merge"});
    call.request.wait = wait;
    EXPECT_EQ(ran(gate.handle(call)).args,
              (std::vector<std::string>{"--wait", wait, "--", "merge"}));
  }
}

TEST_F(GateOp, RefusesMoreArgumentsThanMaxArgs) {
  Op gate("gate", with_command());
  EXPECT_EQ(refusal_of(gate.handle(ask(std::vector<std::string>(40, "x")))),
            "gate: 40 arguments, more than max_args 32");
}

TEST_F(GateOp, RefusesAnEmptyWaitArg) {
  EXPECT_EQ(load_error("gate", with_command({{"wait_arg", {""}}})),
            "ops.gate.wait_arg: must not be empty");
}

TEST_F(GateOp, NamesWaitArgAmongTheAllowedKeys) {
  EXPECT_EQ(load_error("gate", with_command({{"wait", {"5m"}}})),
            "ops.gate.wait: unknown key; allowed: command, args, subcommands, arg_pattern, "
            "allow_options, end_of_options, max_args, max_arg_bytes, env, path, cwd, timeout_ms, "
            "input, wait_arg");
}

}  // namespace
}  // namespace ops_test
