// The plugin's environment on top of BaseEnv: what plugin_env() picks from a caller's
// environment, and what Host::command() refuses of it, for a gateway that links the core.
#include "fixtures.hpp"

#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/launch_client/plugin_env.hpp>
#include <sandbox_host/host/launch_client/spec_codec.hpp>
#include <sandbox_host/sandboxtest.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace sandbox_host {
namespace {

using Env = std::vector<std::string>;

std::string refusal(const PluginEnvRequest &request, const Env &caller = {}) {
  try {
    plugin_env(request, caller);
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "";
}

TEST(PluginEnv, OnlyTheNamedVariablesPassAndTheLastDefinitionWins) {
  const Env caller{"FOO=first",
                   "SECRET=s",
                   "FOO=last",
                   "COOKIE=c",
                   "PLUGIN_MIN_PORT=5",
                   "PLUGIN_PROTOCOL_VERSIONS=1,2",
                   "CLAWPATROL_SANDBOX_SPEC=x"};
  EXPECT_EQ(
      plugin_env({{"FOO", "BAR=x=y", "UNSET", "BAR=z"}, "COOKIE"}, caller),
      (Env{"FOO=last", "BAR=z", "COOKIE=c", "PLUGIN_MIN_PORT=5", "PLUGIN_PROTOCOL_VERSIONS=1,2"}));
  EXPECT_EQ(plugin_env({{}, std::nullopt}, caller), Env{});
  // A caller's empty value is a value.
  EXPECT_EQ(plugin_env({{"EMPTY"}, std::nullopt}, {"EMPTY="}), Env{"EMPTY="});
}

TEST(PluginEnv, RefusesWhatMayNotPassByName) {
  EXPECT_NE(refusal({{"CLAWPATROL_SANDBOX_BACKEND"}, {}}).find("CLAWPATROL_* variables"),
            std::string::npos);
  // Whether or not the caller has a value for it.
  EXPECT_NE(refusal({{"HOME"}, {}}).find("env HOME: BaseEnv sets this variable"),
            std::string::npos);
  EXPECT_NE(refusal({{"TMPDIR=/x"}, {}}, {"TMPDIR=/tmp"}).find("env TMPDIR"), std::string::npos);
  for (const std::string bad : {"", "=x", "1A", "A B=1", "A-B", "Ä=1"}) {
    EXPECT_NE(refusal({{bad}, {}}).find("not a variable name"), std::string::npos) << bad;
  }
  EXPECT_NE(refusal({{std::string("A=\0b", 4)}, {}}).find("NUL"), std::string::npos);
  EXPECT_NE(refusal({{}, "COOKIE=1"}).find("the magic cookie's name, without a value"),
            std::string::npos);
  EXPECT_NE(refusal({{}, "CLAWPATROL_X"}).find("CLAWPATROL_*"), std::string::npos);
}

class HostPluginEnv : public ::testing::Test {
 protected:
  std::string refusal(const Env &plugin_env) {
    try {
      host_.command(spec_.spec, "reexec", plugin_env);
    } catch (const std::invalid_argument &e) {
      return e.what();
    }
    return "";
  }

  test::AuditCapture audit_;
  Host host_{audit_.apply(test::test_config({"reexec"}, {"reexec"}))};
  sandboxtest::TempSpec spec_{"report", REPORT_PLUGIN};
};

// The plugin's environment as a re-executing backend's command carries it: in the Spec.
Env plugin_environment(const LaunchCommand &command) {
  const std::string prefix = std::string(kEnvSpec) + "=";
  for (const auto &entry : command.env) {
    if (entry.starts_with(prefix))
      return decode_stage1_payload(entry.substr(prefix.size())).spec.env;
  }
  return {};
}

TEST_F(HostPluginEnv, ThePassedVariablesFollowBaseEnvAndTheAuditNamesThem) {
  const LaunchCommand command = host_.command(spec_.spec, "reexec", {"GOOD=1", "ALSO="});
  const Env env = plugin_environment(command);
  EXPECT_EQ(std::count(env.begin(), env.end(), "GOOD=1"), 1);
  EXPECT_EQ(std::count(env.begin(), env.end(), "ALSO="), 1);
  // Stage 1's own environment holds none of them.
  EXPECT_EQ(std::count(command.env.begin(), command.env.end(), "GOOD=1"), 0);
  const auto records = audit_.records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].at("rule"), "env-passed");
  EXPECT_EQ(records[0].at("attempted"),
            "launch under reexec with the caller's variables GOOD, ALSO");
  EXPECT_EQ(records[0].at("refused"), "false");
}

// Spec::env is the host's to compose: a caller (a C++ gateway, or a launch request sent to
// the service by hand) that fills it, LD_PRELOAD say, is refused, never passed to stage 1.
TEST_F(HostPluginEnv, ASpecThatBringsItsOwnEnvironmentIsRefused) {
  sandboxtest::TempSpec given{"report", REPORT_PLUGIN};
  given.spec.env = {"LD_PRELOAD=/tmp/x.so"};
  try {
    host_.command(given.spec, "reexec");
    ADD_FAILURE() << "a Spec with its own env was launched";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("spec: env is the host's to compose"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(host_.prepared_launch_spec(given.spec, "reexec"), std::invalid_argument);
  const auto records = audit_.records();
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.back().at("rule"), "spec-env");
}

TEST_F(HostPluginEnv, WhatBaseEnvOrTheBackendSetsNamesTwiceOrHasNoValueIsRefused) {
  EXPECT_NE(refusal({"REEXEC_TEST_BACKEND=2"}).find("env REEXEC_TEST_BACKEND: backend reexec sets"),
            std::string::npos);
  EXPECT_NE(refusal({"PATH=/evil"}).find("env PATH: BaseEnv sets"), std::string::npos);
  EXPECT_NE(refusal({"A=1", "A=2"}).find("env A: named twice"), std::string::npos);
  EXPECT_NE(refusal({"NOVALUE"}).find("NAME=VALUE here"), std::string::npos);
  EXPECT_NE(refusal({"CLAWPATROL_X=1"}).find("CLAWPATROL_*"), std::string::npos);
  // Each refusal of a reserved name is a record; none is a launch.
  for (const auto &record : audit_.records()) EXPECT_NE(record.at("rule"), "env-passed");
  const auto records = audit_.records();
  EXPECT_EQ(std::count_if(records.begin(), records.end(),
                          [](const auto &record) { return record.at("rule") == "plugin-env"; }),
            5);
}

}  // namespace
}  // namespace sandbox_host
