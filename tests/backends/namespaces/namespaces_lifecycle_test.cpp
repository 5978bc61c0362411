// The sandbox's init as pid 1: the plugin's exit status and termination signals pass through
// stage 1 and init unchanged.
#include "fixtures.hpp"
#include "process.hpp"

#include <gtest/gtest.h>

#include <signal.h>

namespace sandbox_host {
namespace {

using test::ProcessResult;
using test::run_process;

const std::vector<std::string> kEnv{"PATH=/usr/bin:/bin", "CLAWPATROL_SANDBOX_BACKEND=namespaces"};

std::vector<std::string> run_report(std::vector<std::string> args) {
  std::vector<std::string> argv{SANDBOX_HOST_EXE, "run", "--", REPORT_PLUGIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

TEST(NamespacesLifecycle, ExitStatusPassesThroughInitAndStage1) {
  EXPECT_EQ(run_process(run_report({"report", "42"}), test::with_env(kEnv)).code, 42);
  EXPECT_EQ(run_process(run_report({"report", "0"}), test::with_env(kEnv)).code, 0);
  EXPECT_EQ(run_process(run_report({"signal", std::to_string(SIGUSR1)}), test::with_env(kEnv)).code,
            128 + SIGUSR1);
}

TEST(NamespacesLifecycle, ThePluginIsPidTwoUnderItsInitInItsOwnSession) {
  ProcessResult result = run_process(run_report({"report"}), test::with_env(kEnv));
  ASSERT_EQ(result.code, 0) << result.err;
  test::PluginReport report = test::parse_report(result.out);
  EXPECT_EQ(report.pid, 2);
  EXPECT_EQ(report.sid, 2);
}

TEST(NamespacesLifecycle, TerminationSignalsReachThePluginThroughInit) {
  test::RunningProcess run(run_report({"sleep", "30"}), test::with_env(kEnv));
  auto ready = run.read_line(std::chrono::seconds(10));
  ASSERT_EQ(ready.value_or("<nothing>"), "ready 2");
  ASSERT_EQ(::kill(run.pid(), SIGTERM), 0);
  ProcessResult result = run.wait(std::chrono::seconds(10));
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.code, 128 + SIGTERM) << result.err;
}

}  // namespace
}  // namespace sandbox_host

namespace sandbox_host {
namespace {

TEST(NamespacesLifecycle, ReadPathsThatWouldUncoverTheHostAreRefused) {
  for (const std::string path : {"/", "/proc", "/dev/shm"}) {
    ProcessResult result =
        run_process({SANDBOX_HOST_EXE, "run", "--read", path, "--", REPORT_PLUGIN, "report"},
                    test::with_env(kEnv));
    EXPECT_EQ(result.code, 125) << path;
    EXPECT_EQ(result.out, "") << path;
    EXPECT_NE(result.err.find("sandbox-host: refused: namespaces plugin=report_plugin "
                              "rule=backend-command: backend namespaces: cannot build the "
                              "command for plugin \"report_plugin\": read path " +
                              path + ": the sandbox builds its own /, /proc and /dev"),
              std::string::npos)
        << result.err;
  }
}

}  // namespace
}  // namespace sandbox_host
