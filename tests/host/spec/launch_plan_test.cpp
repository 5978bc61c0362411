// plan_launch decides the whole Spec, for `run` and for the launch service alike: the
// plugin's name, its network (the caller's, the config's, or a policy's proxied), a policy's
// view and the config's limits are in the planned Spec, and nothing after the plan adds them.
#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/launch_client/launch_request.hpp>
#include <sandbox_host/host/launch_plan.hpp>

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace sandbox_host {
namespace {

// sandbox = "off" for the plugin: planning it probes no backend.
constexpr const char *kConfig =
    "[egress]\n"
    "[limits]\nprocesses = 64\nfile_size = \"8M\"\n"
    "[plugins.true]\nsandbox = \"off\"\n"
    "[plugins.tool]\nsandbox = \"off\"\nnetwork = \"outbound\"\n"
    "[plugins.tool.limits]\nprocesses = 16\n";

LaunchRequest request_for(const std::string &plugin_name) {
  LaunchRequest request;
  request.spec.binary_path = "/bin/true";
  request.spec.plugin_name = plugin_name;
  return request;
}

// What the launch service plans: the request as it arrives over its socket, checked first.
LaunchPlan plan_as_service(Host &host, const LaunchRequest &request) {
  LaunchRequest received = decode_launch_request(encode_launch_request(request));
  require_configured_confinement(host, received);
  return plan_launch(host, std::move(received));
}

void expect_config_limits(Host &host, const Spec &spec) {
  const LaunchLimits limits = host.config().limits_for(spec.plugin_name);
  EXPECT_EQ(spec.limits, limits.process);
  EXPECT_EQ(spec.process_memory,
            host.cgroup_placement().bounds("memory") ? Limits::kUnlimited : limits.cgroup.memory);
}

TEST(LaunchPlan, RunAndTheServicePlanTheSameSpec) {
  test::TempFile file(kConfig, "config.toml");
  Host host(load_config(file.path()));
  for (const std::string &named : {std::string(), std::string("tool")}) {
    const LaunchPlan run = plan_launch(host, request_for(named));
    const LaunchPlan service = plan_as_service(host, request_for(named));
    for (const LaunchPlan *plan : {&run, &service}) {
      const Spec &spec = plan->spec;
      EXPECT_EQ(spec.plugin_name, named.empty() ? "true" : named);
      EXPECT_EQ(spec.network, named.empty() ? Network::none : Network::outbound);
      EXPECT_TRUE(spec.view.empty());
      EXPECT_EQ(plan->mode, kModeOff);
      expect_config_limits(host, spec);
    }
    EXPECT_EQ(run.spec.limits.processes, named.empty() ? 64u : 16u);
    EXPECT_EQ(run.spec.limits.file_size, 8u << 20);
  }
}

TEST(LaunchPlan, TheCallersNetworkIsPlannedForRunAndTheService) {
  test::TempFile file(kConfig, "config.toml");
  Host host(load_config(file.path()));
  LaunchRequest request = request_for("");
  request.spec.network = Network::proxied;
  request.network_given = true;
  const LaunchPlan run = plan_launch(host, request);
  const LaunchPlan service = plan_as_service(host, request);
  for (const LaunchPlan *plan : {&run, &service}) {
    EXPECT_EQ(plan->spec.network, Network::proxied);
    EXPECT_EQ(plan->spec.proxy_port, host.config().egress->sandbox_port());
    EXPECT_FALSE(plan->spec.proxy_socket.empty());
  }
}

TEST(LaunchPlan, APolicysLaunchIsProxiedAndHeldToItsView) {
  test::TempFile file(kConfig, "config.toml");
  Host host(load_config(file.path()));
  const std::vector<PathRule> view{{"/usr", PathAccess::read}};
  const LaunchPlan plan = plan_launch(host, request_for(""), view);
  EXPECT_EQ(plan.spec.plugin_name, "true");
  EXPECT_EQ(plan.spec.network, Network::proxied);
  EXPECT_EQ(plan.spec.proxy_port, host.config().egress->sandbox_port());
  ASSERT_EQ(plan.spec.view.size(), 1u);
  EXPECT_EQ(plan.spec.view[0].path, "/usr");
  expect_config_limits(host, plan.spec);

  // The config's network for the plugin stands; a view of nothing still shows the host
  // read-only.
  const LaunchPlan tool = plan_launch(host, request_for("tool"), std::vector<PathRule>{});
  EXPECT_EQ(tool.spec.network, Network::outbound);
  ASSERT_EQ(tool.spec.view.size(), 1u);
  EXPECT_EQ(tool.spec.view[0].path, "/");
  EXPECT_EQ(tool.spec.view[0].access, PathAccess::read);
}

TEST(LaunchPlan, APolicysLaunchWithoutEgressGetsNoNetwork) {
  test::TempFile file("[plugins.true]\nsandbox = \"off\"\n", "config.toml");
  Host host(load_config(file.path()));
  EXPECT_EQ(plan_launch(host, request_for(""), std::vector<PathRule>{}).spec.network,
            Network::none);
}

}  // namespace
}  // namespace sandbox_host
