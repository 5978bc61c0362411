// SandboxPool: every way a prepared sandbox can be unusable (killed, failing, idle too
// long, not ready in time) still ends in a launch that works, audited; and the status a
// prepared sandbox reports on its channel.
#include "sandbox_pool_harness.hpp"

namespace sandbox_host {
namespace {

using namespace pool_harness;

// ---- prepared sandboxes that cannot be used ---------------------------------------------------

TEST_F(SandboxPoolTest, ASandboxKilledBeforeItsLaunchIsAuditedAndTheLaunchStillRuns) {
  SandboxPool pool(host_, "namespaces", Network::none);
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  const std::vector<pid_t> prepared = stage1_processes();
  ASSERT_EQ(prepared.size(), 1u);
  ASSERT_NO_FATAL_FAILURE(kill_sandbox(prepared.front()));

  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  PluginStdio io;
  Child child = pool.launch(t.spec, io.stdio());
  EXPECT_NE(child.pid(), prepared.front());
  Outcome outcome = io.finish(child);
  EXPECT_EQ(outcome.status.shell_status(), 0) << outcome;
  EXPECT_EQ(test::parse_report(outcome.out).env, base_env_of(t.spec));

  const PoolStats stats = pool.stats();
  EXPECT_EQ(stats.failed, 1u);
  EXPECT_EQ(stats.prepared_launches + stats.cold_launches, 1u);
  // One failure is not max_failures (3) in a row.
  EXPECT_TRUE(pool.preparing());

  const auto records = pool_records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].at("component"), "namespaces");
  EXPECT_EQ(records[0].at("attempted").rfind("prepared sandbox ", 0), 0u)
      << records[0].at("attempted");
  EXPECT_NE(records[0].at("attempted").find("(stage 1 exit " + std::to_string(128 + SIGKILL)),
            std::string::npos)
      << records[0].at("attempted");
  EXPECT_EQ(records[0].at("hint"), "the launch ran without it");
}

TEST_F(SandboxPoolTest, AfterMaxFailuresInARowThePoolStopsPreparingAndLaunchesRunCold) {
  SandboxPool pool(host_, "namespaces", Network::none, {.depth = 2, .max_failures = 2});
  ASSERT_EQ(pool.wait_ready(kTimeout), 2u);
  const std::vector<pid_t> prepared = stage1_processes();
  ASSERT_EQ(prepared.size(), 2u);
  for (pid_t stage1 : prepared) ASSERT_NO_FATAL_FAILURE(kill_sandbox(stage1));

  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 0);
  EXPECT_EQ(pool.stats().failed, 2u);
  EXPECT_FALSE(pool.preparing());

  const auto records = pool_records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].at("hint"), "the launch ran without it");
  EXPECT_EQ(records[1].at("hint"),
            "the pool stopped preparing sandboxes; launches run without them");

  // A replacement already being started when the pool gave up may still serve one launch;
  // none is started after it.
  for (int launch = 0; launch < 3; ++launch) {
    EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 0);
  }
  const PoolStats stats = pool.stats();
  EXPECT_LE(stats.prepared_launches, 1u);
  EXPECT_GE(stats.cold_launches, 3u);
  EXPECT_EQ(stats.prepared_launches + stats.cold_launches, 4u);
  EXPECT_TRUE(stage1_processes().empty());
  EXPECT_EQ(pool_records().size(), 2u);
}

TEST_F(SandboxPoolTest, ASandboxOlderThanMaxIdleIsNotUsedAndIsNoFailure) {
  SandboxPool pool(host_, "namespaces", Network::none,
                   {.depth = 1, .max_idle = 0ms, .ready_timeout = 300ms});
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  const std::vector<pid_t> old = stage1_processes();
  ASSERT_EQ(old.size(), 1u);

  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  PluginStdio io;
  Child child = pool.launch(t.spec, io.stdio());
  EXPECT_NE(child.pid(), old.front());
  EXPECT_TRUE(eventually([&] { return test::process_gone(old.front()); }));
  Outcome outcome = io.finish(child);
  EXPECT_EQ(outcome.status.shell_status(), 0) << outcome;

  const PoolStats stats = pool.stats();
  EXPECT_EQ(stats.prepared_launches + stats.cold_launches, 1u);
  EXPECT_EQ(stats.failed, 0u);
  EXPECT_TRUE(pool_records().empty());
  EXPECT_TRUE(pool.preparing());
}

TEST_F(SandboxPoolTest, WithRenewIdleAnOldSandboxIsReplacedBeforeALaunchAsks) {
  SandboxPool pool(host_, "namespaces", Network::none,
                   {.depth = 1, .max_idle = 500ms, .renew_idle = true});
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  const std::vector<pid_t> old = stage1_processes();
  ASSERT_EQ(old.size(), 1u);
  // No launch asks, and still the old one goes and a fresh one takes its place.
  EXPECT_TRUE(eventually([&] {
    const std::vector<pid_t> now = stage1_processes();
    return test::process_gone(old.front()) && now.size() == 1u && now.front() != old.front();
  }));
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);

  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  PluginStdio io;
  Child child = pool.launch(t.spec, io.stdio());
  Outcome outcome = io.finish(child);
  EXPECT_EQ(outcome.status.shell_status(), 0) << outcome;
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
  EXPECT_EQ(pool.stats().failed, 0u);
  EXPECT_TRUE(pool_records().empty());
}

// The preparefails test backend: its prepared sandboxes fail, its cold launches work.
class UnusableSandboxes : public ::testing::Test {
 protected:
  std::vector<std::map<std::string, std::string>> pool_records() const {
    return pool_records_in(audit_);
  }

  test::AuditCapture audit_;
  Host host_{audit_.apply(test::test_config({"preparefails"}, {"preparefails"}))};
};

TEST_F(UnusableSandboxes, ASetupFailureIsAuditedWithStage1sLineAndTheLaunchRunsCold) {
  SandboxPool pool(host_, "preparefails", Network::none, {.depth = 1, .max_failures = 2});
  ASSERT_TRUE(pool.preparing());
  EXPECT_EQ(pool.wait_ready(kTimeout), 0u);
  EXPECT_EQ(pool.stats().failed, 1u);
  EXPECT_TRUE(pool.preparing());

  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  Outcome outcome = launch_and_finish(pool, t.spec);
  EXPECT_EQ(outcome.status.shell_status(), 0) << outcome;
  EXPECT_EQ(test::parse_report(outcome.out).env, base_env_of(t.spec));

  const PoolStats stats = pool.stats();
  EXPECT_EQ(stats.failed, 2u);
  EXPECT_EQ(stats.cold_launches, 1u);
  EXPECT_EQ(stats.prepared_launches, 0u);
  EXPECT_FALSE(pool.preparing());

  const auto records = pool_records();
  ASSERT_EQ(records.size(), 2u);
  for (const auto &record : records) {
    EXPECT_EQ(record.at("component"), "preparefails");
    EXPECT_EQ(record.at("attempted"),
              "prepared sandbox died while setting up (stage 1 exit 87: clawpatrol-sandbox: "
              "mount: refused on purpose by the test backend)");
  }
  EXPECT_EQ(records[1].at("hint"),
            "the pool stopped preparing sandboxes; launches run without them");

  // Given up: nothing is started any more, and launches run cold at once.
  EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 0);
  EXPECT_EQ(pool.stats().cold_launches, 2u);
  EXPECT_EQ(pool.stats().failed, 2u);
  EXPECT_TRUE(stage1_processes().empty());
}

TEST_F(UnusableSandboxes, ASandboxNotReadyInTimeIsKilledAndTheLaunchRunsCold) {
  SandboxPool pool(host_, "preparefails", Network::outbound,
                   {.depth = 1, .ready_timeout = 200ms, .max_failures = 1});
  TempSpec t("report", REPORT_PLUGIN, Network::outbound);
  t.spec.args = {"report"};
  const auto started = Clock::now();
  PluginStdio io;
  Child child = pool.launch(t.spec, io.stdio());
  EXPECT_GE(Clock::now() - started, 200ms);
  Outcome outcome = io.finish(child);
  EXPECT_EQ(outcome.status.shell_status(), 0) << outcome;
  EXPECT_EQ(pool.stats().cold_launches, 1u);
  EXPECT_EQ(pool.stats().failed, 1u);
  EXPECT_FALSE(pool.preparing());
  // The sandbox that never got ready was killed, not left behind.
  EXPECT_TRUE(stage1_processes().empty());

  const auto records = pool_records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].at("attempted"), "prepared sandbox was not ready in time (stage 1 exit " +
                                            std::to_string(128 + SIGKILL) + ")");
}

// ---- the status a prepared sandbox reports ---------------------------------------------------

// The reports test backend: its prepared stage 1 reports a status on its channel (ABI 1.5).
class ReportingSandboxes : public ::testing::Test {
 protected:
  test::AuditCapture audit_;
  Host host_{audit_.apply(test::test_config({"reports"}, {"reports"}))};
};

TEST_F(ReportingSandboxes, TheReportedStatusIsTheChildsWhileStage1StillRuns) {
  SandboxPool pool(host_, "reports", Network::none, {.depth = 1, .replace = false});
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  TempSpec t("report-and-stay", REPORT_PLUGIN);
  PluginStdio io;
  Child child = pool.launch(t.spec, io.stdio());
  ASSERT_EQ(pool.stats().prepared_launches, 1u);
  ASSERT_GE(child.status_fd(), 0);
  pollfd reported{child.status_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&reported, 1, static_cast<int>(kTimeout.count())), 1)
      << "no status report within " << kTimeout.count() << " ms";
  EXPECT_EQ(child.wait().shell_status(), 42);
  // Stage 1 never exits on its own: the status came from the report, not from its exit.
  EXPECT_FALSE(test::process_gone(child.pid()));
  const pid_t stage1 = child.pid();
  { Child done = std::move(child); }  // kills and reaps it
  EXPECT_TRUE(test::process_gone(stage1));
}

TEST_F(ReportingSandboxes, AStatusOutOfRangeIsNotTakenAndStage1sExitCounts) {
  SandboxPool pool(host_, "reports", Network::none, {.depth = 1, .replace = false});
  TempSpec t("report-out-of-range", REPORT_PLUGIN);
  EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 7);
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
}

TEST_F(ReportingSandboxes, WithoutAReportStage1sExitIsTheStatus) {
  SandboxPool pool(host_, "reports", Network::none, {.depth = 1, .replace = false});
  TempSpec t("no-report", REPORT_PLUGIN);
  // 90 or 91 would mean status_descriptor() was wrong before or after the launch.
  EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 5);
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
}

TEST_F(SandboxPoolTest, APreparedLaunchReportsOnItsChannelAndAColdOneHasNone) {
  SandboxPool pool(host_, "namespaces", Network::none, {.depth = 1, .replace = false});
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report", "42"};
  PluginStdio io;
  Child prepared = pool.launch(t.spec, io.stdio());
  ASSERT_EQ(pool.stats().prepared_launches, 1u);
  ASSERT_GE(prepared.status_fd(), 0);
  EXPECT_EQ(io.finish(prepared).status.shell_status(), 42);

  PluginStdio cold_io;
  Child cold = pool.launch(t.spec, cold_io.stdio());
  ASSERT_EQ(pool.stats().cold_launches, 1u);
  EXPECT_EQ(cold.status_fd(), -1);
  EXPECT_EQ(cold_io.finish(cold).status.shell_status(), 42);
}

}  // namespace
}  // namespace sandbox_host
