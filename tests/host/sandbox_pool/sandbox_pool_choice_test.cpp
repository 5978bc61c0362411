// SandboxPool: which launches use a prepared sandbox (by network, depth and backend, and
// which modules prepare at all), and the launches it refuses as a cold launch would, still
// serving the next one.
#include "sandbox_pool_harness.hpp"

namespace sandbox_host {
namespace {

using namespace pool_harness;

// ---- which launches use a prepared sandbox ------------------------------------------------

TEST_F(SandboxPoolTest, LaunchesInARowEachGetAPreparedSandbox) {
  SandboxPool pool(host_, "namespaces", Network::none);
  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report", "7"};
  for (int launch = 1; launch <= 3; ++launch) {
    Outcome outcome = launch_and_finish(pool, t.spec);
    EXPECT_EQ(outcome.status.shell_status(), 7) << "launch " << launch << ": " << outcome;
    // The one before took the only sandbox: this one ran in its replacement.
    EXPECT_EQ(pool.stats().prepared_launches, static_cast<size_t>(launch));
  }
  EXPECT_EQ(pool.stats().cold_launches, 0u);
  EXPECT_EQ(pool.stats().failed, 0u);
}

TEST_F(SandboxPoolTest, TwoPoolsServeTheirOwnNetworks) {
  SandboxPool none(host_, "namespaces", Network::none);
  SandboxPool outbound(host_, "namespaces", Network::outbound);
  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  for (int round = 0; round < 2; ++round) {
    t.spec.network = Network::none;
    EXPECT_EQ(launch_and_finish(none, t.spec).status.shell_status(), 0);
    t.spec.network = Network::outbound;
    EXPECT_EQ(launch_and_finish(outbound, t.spec).status.shell_status(), 0);
  }
  EXPECT_EQ(none.stats().prepared_launches, 2u);
  EXPECT_EQ(outbound.stats().prepared_launches, 2u);
  EXPECT_EQ(none.stats().cold_launches + outbound.stats().cold_launches, 0u);
}

TEST_F(SandboxPoolTest, WithoutReplaceOnlyDepthLaunchesArePreparedAndTheNextRunsColdAtOnce) {
  SandboxPool pool(host_, "namespaces", Network::none,
                   {.depth = 1, .replace = false, .ready_timeout = 60s});
  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 0);
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
  // Well past refill_delay, and no replacement was started.
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(stage1_processes().empty());

  // Not after ready_timeout (60 s) waiting for a sandbox that will never come: a hang
  // bound with a wide margin, not a speed check.
  const auto started = Clock::now();
  EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 0);
  EXPECT_LT(Clock::now() - started, 30s);
  EXPECT_EQ(pool.stats().cold_launches, 1u);
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
}

TEST_F(SandboxPoolTest, ASpecForAnotherNetworkRunsColdAndWorks) {
  SandboxPool pool(host_, "namespaces", Network::none);
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  TempSpec t("report", REPORT_PLUGIN, Network::outbound);
  t.spec.args = {"report", "5"};
  Outcome outcome = launch_and_finish(pool, t.spec);
  EXPECT_EQ(outcome.status.shell_status(), 5) << outcome;
  EXPECT_EQ(test::parse_report(outcome.out).env, base_env_of(t.spec));
  EXPECT_EQ(pool.stats().cold_launches, 1u);
  EXPECT_EQ(pool.stats().prepared_launches, 0u);

  // The prepared sandbox was left for a launch it fits.
  t.spec.network = Network::none;
  EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 5);
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
  EXPECT_EQ(pool.stats().cold_launches, 1u);
}

// No namespaces needed: these backends never prepare.
class NonPreparingBackend : public ::testing::TestWithParam<std::string> {};

TEST_P(NonPreparingBackend, LaunchesColdAndWork) {
  const std::string mode = GetParam();
  Host host(test::test_config({mode}, {}));
  EXPECT_FALSE(host.prepares(mode));
  SandboxPool pool(host, mode, Network::none);
  EXPECT_FALSE(pool.preparing());
  // Nothing to wait for: at once, not after the timeout.
  const auto started = Clock::now();
  EXPECT_EQ(pool.wait_ready(kTimeout), 0u);
  EXPECT_LT(Clock::now() - started, 1s);

  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report", "3"};
  Outcome outcome = launch_and_finish(pool, t.spec);
  EXPECT_EQ(outcome.status.shell_status(), 3) << outcome;
  EXPECT_EQ(test::parse_report(outcome.out).env, base_env_of(t.spec));
  EXPECT_EQ(pool.stats().cold_launches, 1u);
  EXPECT_EQ(pool.stats().prepared_launches, 0u);
  EXPECT_EQ(pool.stats().failed, 0u);
}

// off: the unsandboxed backend; cbackend: a module built against ABI 1.0, whose table ends
// before stage1_prepared.
INSTANTIATE_TEST_SUITE_P(SandboxPool, NonPreparingBackend, ::testing::Values("off", "cbackend"));

TEST(SandboxPoolModules, OnlyAnAbi11ModuleWithStage1PreparedPrepares) {
  auto prepares = [](const fs::path &file) {
    return BackendModule(std::make_shared<const LoadedModule>(file, ModuleKind::backend))
        .prepares();
  };
  EXPECT_FALSE(prepares(fs::path(TEST_MODULE_DIR) / "backend_cbackend.so"));
  EXPECT_FALSE(prepares(fs::path(BUILD_MODULE_DIR) / "backend_off.so"));
  EXPECT_TRUE(prepares(fs::path(BUILD_MODULE_DIR) / "backend_namespaces.so"));
}

// ---- launches the pool refuses ---------------------------------------------------------------

TEST_F(SandboxPoolTest, ABadSpecThrowsAsCommandDoesAndThePoolServesTheNextLaunch) {
  SandboxPool pool(host_, "namespaces", Network::none);
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  Spec bad = t.spec;
  bad.binary_path = "bin/report_plugin";

  const std::string from_command = error_of([&] { host_.command(bad, "namespaces"); });
  ASSERT_EQ(from_command,
            "plugin \"report\": spec BinaryPath: \"bin/report_plugin\" is not an absolute path");
  const std::vector<pid_t> prepared = stage1_processes();
  ASSERT_EQ(prepared.size(), 1u);
  EXPECT_THROW(pool.launch(bad), SpecError);
  EXPECT_EQ(error_of([&] { pool.launch(bad); }), from_command);

  // The sandbox the refused launch would have taken is still there for this one.
  EXPECT_EQ(launch_in_sandbox(pool, t.spec, prepared.front()).status.shell_status(), 0);
  const PoolStats stats = pool.stats();
  EXPECT_EQ(stats.prepared_launches, 1u);
  EXPECT_EQ(stats.cold_launches, 0u);
  EXPECT_EQ(stats.failed, 0u);
}

// The cold launch's transport (CLAWPATROL_SANDBOX_SPEC) holds a Spec to the same bound as a
// prepared sandbox's, and says so, rather than leaving execve to fail with E2BIG.
TEST_F(SandboxPoolTest, AColdLaunchOfAnOversizedSpecThrowsTheSameLengthError) {
  TempSpec t("big", REPORT_PLUGIN);
  const std::string arg(70 * 1024, 'a');
  t.spec.args = {"report", arg, arg};
  std::string what;
  try {
    host_.command(t.spec, "namespaces");
    ADD_FAILURE() << "a cold launch of " << 2 * arg.size() << " bytes of arguments did not throw";
  } catch (const std::length_error &e) {
    what = e.what();
  }
  const std::string prefix = "launch for plugin \"big\": ";
  const std::string suffix = " bytes of Spec, over " + std::to_string(kMaxLaunchMessage);
  ASSERT_TRUE(what.starts_with(prefix) && what.ends_with(suffix)) << what;
  // Just under the bound, the launch runs.
  t.spec.args = {"report", std::string(kMaxLaunchMessage - 4096, 'a')};
  PluginStdio io;
  Child child = spawn(host_.command(t.spec, "namespaces"), {}, io.stdio());
  const Outcome outcome = io.finish(child);
  EXPECT_EQ(outcome.status.shell_status(), 0) << outcome;
}

TEST_F(SandboxPoolTest, AnOversizedSpecThrowsLengthErrorAndThePoolServesTheNextLaunch) {
  SandboxPool pool(host_, "namespaces", Network::none);
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  TempSpec t("big", REPORT_PLUGIN);
  const std::string arg(70 * 1024, 'a');
  t.spec.args = {"report", arg, arg};

  const std::vector<pid_t> prepared = stage1_processes();
  ASSERT_EQ(prepared.size(), 1u);
  std::string what;
  try {
    pool.launch(t.spec);
    ADD_FAILURE() << "a launch of " << 2 * arg.size() << " bytes of arguments did not throw";
  } catch (const std::length_error &e) {
    what = e.what();
  }
  // "launch for plugin "big": <size> bytes of Spec and environment, over <cap>"
  const std::string prefix = "launch for plugin \"big\": ";
  const std::string suffix =
      " bytes of Spec and environment, over " + std::to_string(kMaxLaunchMessage);
  ASSERT_TRUE(what.starts_with(prefix) && what.ends_with(suffix)) << what;
  const std::string size = what.substr(prefix.size(), what.size() - prefix.size() - suffix.size());
  ASSERT_FALSE(size.empty()) << what;
  ASSERT_TRUE(std::all_of(size.begin(), size.end(), ::isdigit)) << what;
  EXPECT_GT(std::stoul(size), 2 * arg.size());
  EXPECT_EQ(pool.stats().cold_launches, 0u);

  t.spec.args = {"report"};
  EXPECT_EQ(launch_in_sandbox(pool, t.spec, prepared.front()).status.shell_status(), 0);
  const PoolStats stats = pool.stats();
  EXPECT_EQ(stats.prepared_launches, 1u);
  EXPECT_EQ(stats.cold_launches, 0u);
  EXPECT_EQ(stats.failed, 0u);
}

}  // namespace
}  // namespace sandbox_host
