// A gateway's own test of launching plugins, built against the installed sandbox-host
// (find_package(SandboxHost)) and GoogleTest alone.
//
// SANDBOX_HOST_TEST_MODULE_DIR names a module directory that holds backend_off.so (an
// install's <prefix>/lib/sandbox-host/modules).
#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/spawn.hpp>
#include <sandbox_host/host/stage1.hpp>
#include <sandbox_host/sandboxtest.hpp>

#include <gtest/gtest.h>

#include <cstdlib>

// main(): sandbox_host::stage1() first, since a Linux backend re-executes this binary.
SANDBOX_HOST_TEST_MAIN()

// Runs only where a confining backend works (the process's default config, or
// CLAWPATROL_SANDBOX_BACKEND); elsewhere it is skipped with the probe's reason.
TEST(Gateway, RunsTrueInTheBestSandbox) {
  SANDBOX_HOST_SKIP_WITHOUT_BACKEND();
  sandbox_host::sandboxtest::TempSpec t("true", "/bin/true");
  const std::string mode = sandbox_host::probe().mode;
  sandbox_host::Child child = sandbox_host::spawn(sandbox_host::command(t.spec, mode));
  EXPECT_EQ(child.wait().shell_status(), 0) << "under backend " << mode;
}

// Runs everywhere: a Host of its own whose config enables only the off backend, which the
// operator wrote for this one plugin.
TEST(Gateway, RunsTrueUnsandboxedWhenTheConfigSaysOff) {
  const char *module_dir = std::getenv("SANDBOX_HOST_TEST_MODULE_DIR");
  ASSERT_TRUE(module_dir != nullptr && module_dir[0] == '/')
      << "set SANDBOX_HOST_TEST_MODULE_DIR to the absolute path of a directory holding "
         "backend_off.so, e.g. <prefix>/lib/sandbox-host/modules";

  sandbox_host::Config config;
  config.module_dirs = {module_dir};
  config.backends_enabled = {"off"};
  config.backend_priority = {};
  config.plugins["true"].sandbox = "off";
  sandbox_host::Host host(config);
  ASSERT_TRUE(host.registry().failures().empty()) << host.registry().failures().front().error;

  sandbox_host::sandboxtest::TempSpec t("true", "/bin/true");
  sandbox_host::Child child = sandbox_host::spawn(host.command(t.spec, host.mode_for("true")));
  sandbox_host::ExitStatus status = child.wait();
  EXPECT_EQ(status.code, 0);
  EXPECT_EQ(status.signal, 0);
}
