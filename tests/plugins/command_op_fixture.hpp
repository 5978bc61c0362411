// What the tests of the command ops share: an executable to name as the command, a broker
// environment with a known HOME and a variable that must never reach a command, and the
// checks of an outcome.
#pragma once

#include "op_harness.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace ops_test {

class CommandOpTest : public ::testing::Test {
 protected:
  // The op's settings: command = the test's executable, then more.
  sandbox_host::ModuleSettings with_command(const sandbox_host::ModuleSettings &more = {}) const {
    sandbox_host::ModuleSettings settings{{"command", {tool}}};
    settings.insert(settings.end(), more.begin(), more.end());
    return settings;
  }

  // The environment every command starts from, before requester, operator and op add to it.
  static std::vector<std::string> base_env() {
    return {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/broker", "LANG=C.UTF-8"};
  }

  TempDir dir;
  const std::string tool = dir.file("tool", "#!/bin/sh\n", 0755);
  ScopedEnv home{"HOME", "/home/broker"};
  ScopedEnv leak{"SANDBOX_HOST_OPS_LEAK", "broker-only"};
};

// A request with args, as the op's requester sends it.
inline Call ask(std::vector<std::string> args = {}) {
  Call call;
  call.request.args = std::move(args);
  return call;
}

// The one command the op had the host run; a failure when it refused or ran another count.
inline sandbox_host::HostCommand ran(const Outcome &outcome) {
  EXPECT_EQ(outcome.status, SH_OK) << outcome.error;
  EXPECT_EQ(outcome.runs.size(), 1u);
  return outcome.runs.empty() ? sandbox_host::HostCommand{} : outcome.runs.front();
}

// Why the op refused; a failure when it did not, or ran anything first.
inline std::string refusal_of(const Outcome &outcome) {
  EXPECT_EQ(outcome.status, SH_ERROR);
  EXPECT_TRUE(outcome.runs.empty());
  return outcome.error;
}

}  // namespace ops_test
