// SandboxPool after the launch: a setup failure on the launch's stderr, the pool's
// destruction killing what it started, launches from any thread, and wait_ready.
#include "sandbox_pool_harness.hpp"

namespace sandbox_host {
namespace {

using namespace pool_harness;

// ---- after the launch ------------------------------------------------------------------------

TEST_F(SandboxPoolTest, ASetupFailureAfterTheLaunchIsOneLineOnTheLaunchsStderrAndExit87) {
  SandboxPool pool(host_, "namespaces", Network::none);
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  // The interpreter exists on the host, outside everything the Spec grants.
  test::TempFile interpreter_dir("", "unused");
  const fs::path interpreter = fs::canonical(interpreter_dir.dir()) / "interpreter";
  fs::copy_file("/bin/true", interpreter);
  fs::permissions(interpreter, fs::perms::owner_all);
  test::TempFile script_dir("#!" + interpreter.string() + "\n", "plugin");
  const std::string script = fs::canonical(script_dir.path()).string();
  fs::permissions(script, fs::perms::owner_all);
  ASSERT_EQ(test::run_process({script}).code, 0) << "the script should run on the host";

  TempSpec t("shebang", script);
  Outcome outcome = launch_and_finish(pool, t.spec);
  EXPECT_EQ(outcome.status.shell_status(), kStage1ExitCode) << outcome;
  EXPECT_EQ(outcome.err, "clawpatrol-sandbox: exec: " + script + ": No such file or directory\n");
  EXPECT_EQ(outcome.out, "");
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
  EXPECT_EQ(pool.stats().failed, 0u);
}

TEST_F(SandboxPoolTest, DestroyingThePoolKillsItsRunningPluginsAndItsSandboxes) {
  std::optional<SandboxPool> pool(std::in_place, host_, "namespaces", Network::none);
  TempSpec t("sleeper", REPORT_PLUGIN);
  t.spec.args = {"sleep", "60"};
  PluginStdio io;
  Child child = pool->launch(t.spec, io.stdio());
  ASSERT_EQ(io.read_line().value_or("<nothing>"), "ready 2");
  ASSERT_EQ(pool->stats().prepared_launches, 1u);
  // Its stage 1, the sandbox's init and the plugin.
  const std::vector<pid_t> plugin = process_tree(child.pid());
  EXPECT_EQ(plugin.size(), 3u);

  ASSERT_EQ(pool->wait_ready(kTimeout), 1u);
  std::vector<pid_t> prepared;
  for (pid_t stage1 : stage1_processes()) {
    if (stage1 == child.pid()) continue;
    for (pid_t pid : process_tree(stage1)) prepared.push_back(pid);
  }
  EXPECT_EQ(prepared.size(), 2u);  // its stage 1 and its init

  pool.reset();
  if (!eventually([&] { return all_gone(plugin) && all_gone(prepared); }, 5s)) {
    ADD_FAILURE() << "processes of the pool outlived it";
    for (pid_t pid : plugin) ::kill(pid, SIGKILL);
    for (pid_t pid : prepared) ::kill(pid, SIGKILL);
  }
  const ExitStatus status = child.wait();
  EXPECT_EQ(status.signal, SIGKILL);
}

TEST_F(SandboxPoolTest, AnyThreadMayLaunchAndThePluginOutlivesIt) {
  SandboxPool pool(host_, "namespaces", Network::none);
  TempSpec t("late", "/bin/sh");
  // Still running when the launching thread has ended: the parent-death signal of what the
  // pool starts belongs to the pool's thread, not the caller's.
  run_script(t.spec, "sleep 0.3; echo alive");
  for (Network network : {Network::none, Network::outbound}) {
    t.spec.network = network;
    PluginStdio io;
    std::optional<Child> child;
    std::string error;
    std::thread launcher([&] {
      try {
        child.emplace(pool.launch(t.spec, io.stdio()));
      } catch (const std::exception &e) {
        error = e.what();
      }
    });
    launcher.join();
    ASSERT_TRUE(child) << error;
    Outcome outcome = io.finish(*child);
    EXPECT_EQ(outcome.status.shell_status(), 0) << to_string(network) << ": " << outcome;
    EXPECT_EQ(outcome.out, "alive\n") << to_string(network);
  }
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
  EXPECT_EQ(pool.stats().cold_launches, 1u);
}

TEST_F(SandboxPoolTest, ConcurrentLaunchesFromManyThreadsAllRun) {
  SandboxPool pool(host_, "namespaces", Network::none, {.depth = 2});
  TempSpec t("report", REPORT_PLUGIN);
  constexpr int kLaunches = 6;
  std::vector<std::future<Outcome>> launches;
  for (int i = 0; i < kLaunches; ++i) {
    Spec spec = t.spec;
    // Every third for another network: cold launches run on the pool's thread meanwhile.
    spec.network = i % 3 == 2 ? Network::outbound : Network::none;
    spec.args = {"report", std::to_string(10 + i)};
    launches.push_back(
        std::async(std::launch::async, [&pool, spec] { return launch_and_finish(pool, spec); }));
  }
  for (int i = 0; i < kLaunches; ++i) {
    if (launches[i].wait_for(2 * kTimeout) != std::future_status::ready) {
      // A launch that never returns holds the pool: nothing to clean up safely.
      ADD_FAILURE() << "launch " << i << " did not return";
      std::abort();
    }
    Outcome outcome = launches[i].get();
    EXPECT_EQ(outcome.status.shell_status(), 10 + i) << outcome;
  }
  const PoolStats stats = pool.stats();
  EXPECT_EQ(stats.prepared_launches + stats.cold_launches, static_cast<size_t>(kLaunches));
  EXPECT_GE(stats.cold_launches, 2u);
  EXPECT_EQ(stats.failed, 0u);
}

TEST_F(SandboxPoolTest, WaitReadyReturnsDepthOnceEverySandboxIsReady) {
  SandboxPool pool(host_, "namespaces", Network::none, {.depth = 3});
  EXPECT_TRUE(pool.preparing());
  EXPECT_EQ(pool.wait_ready(kTimeout), 3u);
  EXPECT_EQ(stage1_processes().size(), 3u);
  // Already ready: again at once.
  const auto started = Clock::now();
  EXPECT_EQ(pool.wait_ready(kTimeout), 3u);
  EXPECT_LT(Clock::now() - started, 1s);
}

}  // namespace
}  // namespace sandbox_host
