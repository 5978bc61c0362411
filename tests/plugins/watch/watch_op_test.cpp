#include "command_op_fixture.hpp"

#include <chrono>

namespace ops_test {
namespace {

using WatchOp = CommandOpTest;

TEST_F(WatchOp, RefusesARequestThatDoesNotStream) {
  Op watch("watch", with_command());
  EXPECT_EQ(refusal_of(watch.handle(ask({"installations"}))),
            "watch: streams only; ask with stream: true (sandbox-host ask --stream)");
}

TEST_F(WatchOp, RunsForAsLongAsItsRequesterByDefault) {
  Op watch("watch", with_command({{"args", {"watch"}}}));
  Call call = ask({"installations"});
  call.request.stream = true;
  call.streaming = true;
  const auto command = ran(watch.handle(call));
  EXPECT_EQ(command.args, (std::vector<std::string>{"watch", "--", "installations"}));
  EXPECT_EQ(command.timeout, std::chrono::milliseconds(0));
  EXPECT_EQ(command.env, base_env());
}

TEST_F(WatchOp, TakesTheOperatorsTimeout) {
  Op watch("watch", with_command({{"timeout_ms", {"60000"}}}));
  Call call = ask();
  call.streaming = true;
  EXPECT_EQ(ran(watch.handle(call)).timeout, std::chrono::milliseconds(60000));
}

}  // namespace
}  // namespace ops_test
