// A hostile plugin against the launch service (serve's [launcher]), as root and as nobody,
// through the real binaries: a sandboxed plugin that connects to the service's socket by
// path gets nothing launched; an unsandboxed caller never gets weaker confinement than the
// config gives; whatever a plugin makes a child of the service is reaped; idle connections
// hold no other client's launches. Every launch and refusal is in the service's audit.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "process.hpp"
#include "serve_fixture.hpp"

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace sandbox_host {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::ProcessResult;
using test::Service;
using test::User;

struct Attack {
  User user;
  std::string backend;
};

std::string attack_name(const ::testing::TestParamInfo<Attack> &info) {
  return info.param.backend + "_" + test::user_name(info.param.user);
}

// The hostile plugin, copied where the service's user can run it.
std::string hostile_plugin(const Service &service) {
  return service.install().add_binary(HOSTILE_PLUGIN);
}

// A file the service's user may create next to the service, outside any sandbox's grants.
fs::path escape_marker(const Service &service) {
  return service.dir() / "escaped";
}

// `sandbox-host run` of the hostile plugin under backend, as the service's user, with the
// service's directory granted read-only (a namespaces plugin then reaches the socket by path,
// as a Landlock plugin always does).
ProcessResult run_sandboxed(const Service &service, const std::string &backend,
                            const std::vector<std::string> &plugin_args) {
  std::vector<std::string> argv = service.prefix();
  argv.insert(argv.end(), {service.install().sandbox_host(), "run", "--backend", backend, "--read",
                           service.dir().string(), "--", hostile_plugin(service)});
  argv.insert(argv.end(), plugin_args.begin(), plugin_args.end());
  return test::run_process(argv);
}

bool backend_works(const Service &service, const std::string &backend) {
  std::vector<std::string> argv = service.prefix();
  argv.insert(argv.end(),
              {service.install().sandbox_host(), "run", "--backend", backend, "--", "/bin/true"});
  return test::run_process(argv).code == 0;
}

class SandboxedCaller : public ::testing::TestWithParam<Attack> {};

TEST_P(SandboxedCaller, GetsNothingLaunchedWhateverItAsksFor) {
  Service service(GetParam().user);
  if (!backend_works(service, GetParam().backend)) {
    GTEST_SKIP() << "backend " << GetParam().backend << " does not work here";
  }
  const std::string marker = escape_marker(service).string();
  const std::string escape = "cat /etc/shadow > " + marker + " 2>&1; id >> " + marker;
  for (const std::string backend : {"off", "-"}) {
    const ProcessResult attack = run_sandboxed(
        service, GetParam().backend,
        {"launch", service.socket(), backend, "outbound", "--", "/bin/sh", "-c", escape});
    ASSERT_EQ(attack.code, 0) << attack.err;
    EXPECT_EQ(attack.out, "launch: 125\n") << attack.err;
    EXPECT_NE(attack.err.find("a process inside a sandbox"), std::string::npos) << attack.err;
    EXPECT_FALSE(fs::exists(marker)) << test::read_file(marker);
  }
  EXPECT_NE(service.audit().find("launcher-sandboxed-peer"), std::string::npos) << service.audit();
  EXPECT_EQ(service.audit().find("launcher-launch"), std::string::npos) << service.audit();

  // The same client, outside any sandbox, is served: the refusal was the sandbox's.
  std::vector<std::string> argv = service.prefix();
  argv.insert(argv.end(), {hostile_plugin(service), "launch", service.socket(), "-", "none", "--",
                           "/bin/true"});
  const ProcessResult served = test::run_process(argv);
  EXPECT_EQ(served.out, "launch: 0\n") << served.err;
  EXPECT_NE(service.audit().find("launcher-launch"), std::string::npos) << service.audit();
}

// A sandbox that dials the service in a loop is refused every time, and leaves the audit
// 100 records of it and one that counts the rest, not one record each.
TEST_P(SandboxedCaller, ARefusalLoopWritesABoundedAudit) {
  Service service(GetParam().user);
  if (!backend_works(service, GetParam().backend)) {
    GTEST_SKIP() << "backend " << GetParam().backend << " does not work here";
  }
  const ProcessResult attack =
      run_sandboxed(service, GetParam().backend, {"launch-loop", service.socket(), "300"});
  ASSERT_EQ(attack.code, 0) << attack.err;
  EXPECT_EQ(attack.out, "refused: 300\n") << attack.err.substr(0, 2000);
  service.stop();
  std::size_t records = 0;
  std::string count;
  std::istringstream lines(service.audit());
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"rule\":\"launcher-sandboxed-peer\"") == std::string::npos) continue;
    ++records;
    if (line.find("more refusals of this rule") != std::string::npos) count = line;
  }
  EXPECT_EQ(records, 101u) << service.audit().substr(0, 2000);
  EXPECT_NE(count.find("\"attempted\":\"200 more refusals"), std::string::npos) << count;
}

INSTANTIATE_TEST_SUITE_P(Backends, SandboxedCaller,
                         ::testing::Values(Attack{User::root, "landlock"},
                                           Attack{User::nobody, "landlock"},
                                           Attack{User::root, "namespaces"},
                                           Attack{User::nobody, "namespaces"}),
                         attack_name);

class UnsandboxedCaller : public ::testing::TestWithParam<User> {};

TEST_P(UnsandboxedCaller, NeverGetsAWeakerBackendOrNetworkThanTheConfigGives) {
  Service service(GetParam(), "", "[plugins.true]\nnetwork = \"none\"\n");
  const std::string marker = escape_marker(service).string();
  const ProcessResult off =
      test::run_process(service.launch({"--backend", "off", "--name", "escapee", "--", "/bin/sh",
                                        "-c", "echo escaped > " + marker}));
  EXPECT_EQ(off.code, 125) << off.err;
  EXPECT_NE(off.err.find("off is honoured only where the operator wrote sandbox = \"off\" in "
                         "[plugins.escapee]"),
            std::string::npos)
      << off.err;
  EXPECT_FALSE(fs::exists(marker));

  const ProcessResult landlock =
      test::run_process(service.launch({"--backend", "landlock", "--", "/bin/true"}));
  if (backend_works(service, "namespaces")) {
    EXPECT_EQ(landlock.code, 125) << landlock.err;
    EXPECT_NE(landlock.err.find("which backends.priority ranks before it"), std::string::npos)
        << landlock.err;
  }

  const ProcessResult outbound =
      test::run_process(service.launch({"--network", "outbound", "--", "/bin/true"}));
  EXPECT_EQ(outbound.code, 125) << outbound.err;
  EXPECT_NE(outbound.err.find("gives it network none"), std::string::npos) << outbound.err;
  EXPECT_NE(service.audit().find("\"rule\":\"launcher-launch\""), std::string::npos);
  EXPECT_EQ(service.audit().find("\"refused\":\"false\""), std::string::npos) << service.audit();
}

TEST_P(UnsandboxedCaller, GetsOffWhereTheOperatorWroteIt) {
  Service service(GetParam(), "", "[plugins.escapee]\nsandbox = \"off\"\n");
  const std::string marker = escape_marker(service).string();
  const ProcessResult off = test::run_process(
      service.launch({"--backend", "off", "--network", "outbound", "--name", "escapee", "--",
                      "/bin/sh", "-c", "echo unconfined > " + marker}));
  EXPECT_EQ(off.code, 0) << off.err;
  EXPECT_EQ(test::read_file(marker), "unconfined\n");
  const std::string audit = service.audit();
  EXPECT_NE(audit.find("under off, network outbound, for pid"), std::string::npos) << audit;
}

INSTANTIATE_TEST_SUITE_P(Users, UnsandboxedCaller, ::testing::Values(User::root, User::nobody),
                         [](const auto &info) { return test::user_name(info.param); });

class ServiceChildren : public ::testing::TestWithParam<User> {};

// A Landlock plugin is the service's own child: clone(CLONE_PARENT) would make its children
// the service's too, zombies nobody waits for, until the user's process bound stops every
// later launch.
TEST_P(ServiceChildren, WhatAPluginMakesTheServicesChildIsReaped) {
  Service service(GetParam(), "", "[plugins.hostile_plugin]\nsandbox = \"landlock\"\n");
  if (!backend_works(service, "landlock")) GTEST_SKIP() << "landlock does not work here";
  const ProcessResult attack =
      test::run_process(service.launch({"--", hostile_plugin(service), "clone-parent", "600"}));
  ASSERT_EQ(attack.code, 0) << attack.err;
  // The filter refuses clone(CLONE_PARENT): nothing becomes the service's child.
  EXPECT_EQ(attack.out, "clone-parent: 0\n") << attack.err;
  EXPECT_TRUE(test::eventually([&] { return service.zombies().empty(); }, 10s))
      << service.zombies().size() << " zombies of the service; the plugin said " << attack.out;
  // And the service still launches.
  EXPECT_EQ(test::run_process(service.launch({"--", "/bin/true"})).code, 0);
}

// The same with a backend whose stage 1 installs no filter (the test backend that execs
// the plugin as it is, as a third party's might): the children it makes the service's are
// zombies for a moment, and serve reaps them.
TEST_P(ServiceChildren, StrayChildrenOfABackendWithoutTheFilterAreReapedToo) {
  Service service(GetParam(), "depth = 0\n",
                  "[backends]\nenabled = [\"reexec\"]\npriority = [\"reexec\"]\n", {},
                  {std::string(TEST_MODULE_DIR) + "/backend_reexec.so"});
  const ProcessResult attack =
      test::run_process(service.launch({"--", hostile_plugin(service), "clone-parent", "600"}));
  ASSERT_EQ(attack.code, 0) << attack.err;
  ASSERT_EQ(attack.out, "clone-parent: 600\n") << attack.err;
  EXPECT_TRUE(test::eventually([&] { return service.zombies().empty(); }, 10s))
      << service.zombies().size() << " zombies of the service";
  EXPECT_EQ(test::run_process(service.launch({"--", "/bin/true"})).code, 0);
}

// Idle connections, from a sandboxed plugin or an unsandboxed process, hold no other
// client's launch.
TEST_P(ServiceChildren, IdleConnectionsHoldNoOtherClientsLaunches) {
  Service service(GetParam(), "max_launches = 8\n");
  std::vector<std::string> argv = service.prefix();
  argv.insert(argv.end(), {hostile_plugin(service), "hold", service.socket(), "16", "30"});
  test::RunningProcess holder(argv);
  ASSERT_EQ(holder.read_line(20s).value_or(""), "hold: 16");
  int served = 0;
  for (int i = 0; i < 10; ++i) {
    if (test::run_process(service.launch({"--", "/bin/true"})).code == 0) ++served;
  }
  EXPECT_EQ(served, 10);
  EXPECT_NE(service.audit().find("launcher-busy-peer"), std::string::npos) << service.audit();
}

INSTANTIATE_TEST_SUITE_P(Users, ServiceChildren, ::testing::Values(User::root, User::nobody),
                         [](const auto &info) { return test::user_name(info.param); });

}  // namespace
}  // namespace sandbox_host
