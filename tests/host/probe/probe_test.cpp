#include "fixtures.hpp"

#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>

#include <sandbox_host/sandboxtest.hpp>

#include <gtest/gtest.h>

namespace sandbox_host {
namespace {

using test::ScopedEnv;

// alpha and beta work while TEST_BACKEND_ALPHA / TEST_BACKEND_BETA are "1".
class Probe : public ::testing::Test {
 protected:
  ScopedEnv no_force_{std::string(kEnvBackend), std::nullopt};
  ScopedEnv alpha_{"TEST_BACKEND_ALPHA", "1"};
  ScopedEnv beta_{"TEST_BACKEND_BETA", "1"};
};

std::string probe_error(Host &host) {
  try {
    Availability a = host.probe();
    return "chose " + a.mode;
  } catch (const ProbeError &e) {
    return e.what();
  }
}

TEST_F(Probe, ChoosesTheFirstWorkingBackendByPriority) {
  Host host(test::test_config({"alpha", "beta", "off"}, {"alpha", "beta"}));
  Availability a = host.probe();
  EXPECT_EQ(a.mode, "alpha");
  EXPECT_EQ(a.warning, "probe call 1");

  Host beta_first(test::test_config({"alpha", "beta"}, {"beta", "alpha"}));
  EXPECT_EQ(beta_first.probe().mode, "beta");
}

// The core asks the kernel nothing: the Landlock ABI is what the chosen backend's probe
// reported, forced or not.
TEST_F(Probe, TheLandlockAbiIsTheOneTheChosenBackendReported) {
  ScopedEnv alpha_abi("TEST_BACKEND_ALPHA_LANDLOCK_ABI", "5");
  ScopedEnv beta_abi("TEST_BACKEND_BETA_LANDLOCK_ABI", "3");
  Host host(test::test_config({"alpha", "beta"}, {"alpha", "beta"}));
  const Availability chosen = host.probe();
  EXPECT_EQ(chosen.mode, "alpha");
  EXPECT_EQ(chosen.landlock_abi, 5);

  ScopedEnv forced(std::string(kEnvBackend), "beta");
  EXPECT_EQ(host.probe().landlock_abi, 3);
}

TEST_F(Probe, FallsBackWhenTheFirstDoesNotWork) {
  ScopedEnv alpha_broken("TEST_BACKEND_ALPHA", "0");
  Host host(test::test_config({"alpha", "beta"}, {"alpha", "beta"}));
  EXPECT_EQ(host.probe().mode, "beta");
}

TEST_F(Probe, NothingAvailableIsAnErrorWithEveryReasonAndNeverOff) {
  ScopedEnv alpha_broken("TEST_BACKEND_ALPHA", std::nullopt);
  ScopedEnv beta_broken("TEST_BACKEND_BETA", "no");
  // off is enabled and works, yet probe never picks it.
  Host host(test::test_config({"alpha", "beta", "absent", "off"}, {"alpha", "beta", "absent"}));
  std::string error = probe_error(host);
  EXPECT_EQ(error.rfind("no sandbox backend works on this host (alpha: TEST_BACKEND_ALPHA is not 1 "
                        "(hint: export TEST_BACKEND_ALPHA=1); beta: TEST_BACKEND_BETA is not 1 "
                        "(hint: export TEST_BACKEND_BETA=1); absent: module backend_absent.so: "
                        "not installed (module directories: ",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("write sandbox = \"off\" in its [plugins.<name>] table"), std::string::npos);
}

TEST_F(Probe, AForcedBackendIsUsedEvenWhenAnotherComesFirst) {
  ScopedEnv forced(std::string(kEnvBackend), "beta");
  Host host(test::test_config({"alpha", "beta"}, {"alpha", "beta"}));
  EXPECT_EQ(host.probe().mode, "beta");
}

TEST_F(Probe, AForcedUnknownBackendIsAnError) {
  ScopedEnv forced(std::string(kEnvBackend), "namespaces-typo");
  Host host(test::test_config({"alpha", "beta"}, {"alpha", "beta"}));
  EXPECT_EQ(probe_error(host),
            "CLAWPATROL_SANDBOX_BACKEND=namespaces-typo: no such backend enabled; enabled "
            "backends: alpha, beta");
}

TEST_F(Probe, AForcedBackendThatFailsNeverFallsThrough) {
  ScopedEnv forced(std::string(kEnvBackend), "alpha");
  ScopedEnv alpha_broken("TEST_BACKEND_ALPHA", "0");
  Host host(test::test_config({"alpha", "beta"}, {"alpha", "beta"}));
  EXPECT_EQ(probe_error(host),
            "CLAWPATROL_SANDBOX_BACKEND=alpha: the forced backend does not work here, and a forced "
            "backend never falls through: TEST_BACKEND_ALPHA is not 1 (hint: export "
            "TEST_BACKEND_ALPHA=1)");
}

TEST_F(Probe, ForcingOffIsTheOperatorsExplicitChoice) {
  ScopedEnv forced(std::string(kEnvBackend), "off");
  Host host(test::test_config({"alpha", "off"}, {"alpha"}));
  Availability a = host.probe();
  EXPECT_EQ(a.mode, "off");
  EXPECT_NE(a.warning.find("no confinement"), std::string::npos);
}

TEST_F(Probe, ResultsAreCachedPerOverrideValue) {
  Host host(test::test_config({"alpha", "beta"}, {"alpha", "beta"}));
  // Unforced: probed once, then served from the cache even after the host changed.
  EXPECT_EQ(host.probe().warning, "probe call 1");
  {
    ScopedEnv alpha_broken("TEST_BACKEND_ALPHA", "0");
    Availability cached = host.probe();
    EXPECT_EQ(cached.mode, "alpha");
    EXPECT_EQ(cached.warning, "probe call 1");

    // Another override value is probed afresh and sees the change.
    ScopedEnv forced(std::string(kEnvBackend), "alpha");
    EXPECT_NE(probe_error(host).find("the forced backend does not work here"), std::string::npos);
  }
  {
    // That error is cached too, though alpha works again.
    ScopedEnv forced(std::string(kEnvBackend), "alpha");
    EXPECT_NE(probe_error(host).find("the forced backend does not work here"), std::string::npos);
  }
  {
    ScopedEnv forced(std::string(kEnvBackend), "beta");
    EXPECT_EQ(host.probe().mode, "beta");
  }
  // Back to no override: still the first answer.
  EXPECT_EQ(host.probe().warning, "probe call 1");
}

TEST_F(Probe, ProbeAllReportsEveryEnabledBackend) {
  ScopedEnv beta_broken("TEST_BACKEND_BETA", "0");
  Host host(test::test_config({"alpha", "beta", "initfails", "off"}, {"alpha"}));
  auto all = host.probe_all();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].name, "alpha");
  EXPECT_TRUE(all[0].available);
  EXPECT_EQ(all[0].file, std::string(TEST_MODULE_DIR) + "/backend_alpha.so");
  EXPECT_EQ(all[1].name, "beta");
  EXPECT_FALSE(all[1].available);
  EXPECT_EQ(all[1].reason, "TEST_BACKEND_BETA is not 1");
  EXPECT_EQ(all[1].hint, "export TEST_BACKEND_BETA=1");
  EXPECT_FALSE(all[2].loaded);
  EXPECT_NE(all[2].reason.find("init failed: cannot open /dev/frobnicator"), std::string::npos);
  EXPECT_TRUE(all[3].available);
}

TEST_F(Probe, APluginsConfiguredBackendMustWork) {
  Config config = test::test_config({"alpha", "beta", "off"}, {"alpha"});
  config.plugins["pinned"].sandbox = "beta";
  config.plugins["legacy"].sandbox = "off";
  Host host(config);
  EXPECT_EQ(host.mode_for("anything"), "alpha");
  EXPECT_EQ(host.mode_for("pinned"), "beta");
  EXPECT_EQ(host.mode_for("legacy"), "off");

  ScopedEnv beta_broken("TEST_BACKEND_BETA", "0");
  // Probed once per Host, as probe() is: a long-running host does not fork a probe per launch.
  EXPECT_EQ(host.mode_for("pinned"), "beta");
  Host fresh(config);
  try {
    fresh.mode_for("pinned");
    FAIL() << "a configured backend that does not work was used";
  } catch (const ProbeError &e) {
    EXPECT_NE(std::string(e.what()).find("plugin \"pinned\": sandbox = \"beta\""),
              std::string::npos)
        << e.what();
  }
  // The environment's override wins over the plugin's setting.
  ScopedEnv forced(std::string(kEnvBackend), "alpha");
  EXPECT_EQ(host.mode_for("legacy"), "alpha");
}

}  // namespace
}  // namespace sandbox_host

namespace sandbox_host {
namespace {

TEST_F(Probe, ALaunchLoadsOnlyTheBackendsItNeeds) {
  Config config = test::test_config({"alpha", "beta", "off"}, {"alpha", "beta"}, {"ping"});
  config.plugins["legacy"].sandbox = "off";
  Host host(config);
  EXPECT_EQ(host.mode_for("legacy"), "off");
  EXPECT_EQ(host.registry().modules().size(), 0u) << "off needs no probe and no module yet";
  sandboxtest::TempSpec t("legacy", REPORT_PLUGIN);
  host.command(t.spec, "off");
  ASSERT_EQ(host.registry().modules().size(), 1u);
  EXPECT_EQ(host.registry().modules()[0]->name(), "off");

  EXPECT_EQ(host.mode_for("other"), "alpha");
  EXPECT_EQ(host.registry().modules().size(), 2u) << "beta is not probed once alpha works";
  EXPECT_THROW(host.command(t.spec, "reexec"), std::runtime_error) << "not enabled";
}

}  // namespace
}  // namespace sandbox_host
