// [limits] on a plugin's processes, held by the namespaces and the Landlock backend through
// the real `sandbox-host run`, as root and as nobody: the configured rlimits and no core
// dumps, a file too large, too many open files, a fork bomb stopped at the bound while a
// second plugin still answers, a CPU quota, what a plugin leaves behind and its lifetime.
#include "limits_harness.hpp"

namespace sandbox_host::test {
namespace {

using namespace limits_harness;

constexpr const char *kShowRlimits =
    "echo \"processes=$(ulimit -u) files=$(ulimit -n) file_kib=$(ulimit -f) core=$(ulimit -c)\"";

TEST_P(LimitsTest, APluginGetsTheDefaultRlimitsAndNoCoreDumps) {
  configure("");
  const ProcessResult result = bash(kShowRlimits);
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "processes=1024 files=4096 file_kib=4194304 core=0\n");
}

TEST_P(LimitsTest, APluginsOwnLimitsGoOverTheLimitsTable) {
  configure(
      "[limits]\nprocesses = 77\nopen_files = 99\nfile_size = \"3M\"\n\n"
      "[plugins.bash.limits]\nopen_files = 55\n");
  const ProcessResult result = bash(kShowRlimits);
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "processes=77 files=55 file_kib=3072 core=0\n");
}

TEST_P(LimitsTest, AFileOverTheBoundIsStoppedAndTheHostsDiskKeepsNoMore) {
  configure("[limits]\nfile_size = \"1M\"\n");
  const fs::path big = dir_ / "tmp/big";
  const ProcessResult result = bash("head -c 8M /dev/zero > " + big.string() + "; echo status=$?");
  ASSERT_EQ(result.code, 0) << result.err;
  // head is killed by SIGXFSZ: 128 + 25.
  EXPECT_EQ(result.out, "status=153\n") << result.err;
  EXPECT_EQ(fs::file_size(big), 1u << 20);
}

TEST_P(LimitsTest, TooManyOpenFilesAreRefused) {
  configure("[limits]\nopen_files = 32\n");
  const ProcessResult result = bash(
      "last=none; for i in $(seq 100); do exec {fd}</dev/null 2>/dev/null || break; last=$fd; "
      "done; echo last=$last");
  ASSERT_EQ(result.code, 0) << result.err;
  // bash hands out the lowest free descriptor from 10 up: the last one below the bound is 31.
  EXPECT_EQ(result.out, "last=31\n");
}

TEST_P(LimitsTest, AForkBombStopsAtTheBoundAndASecondPluginStillAnswers) {
  // Root is bound by the cgroup alone: the kernel exempts the initial user namespace's uid 0
  // from RLIMIT_NPROC, and a launcher that is root stays uid 0 in the sandbox.
  if (!configure_with_cgroup("processes = 40\n")) GTEST_SKIP() << skip_;
  ForkBomb bomb = start_fork_bomb(400);
  ASSERT_FALSE(bomb.line.empty());
  EXPECT_EQ(bomb.refused, 1) << bomb.line;
  // The cgroup's pids.max is 40 and 3 of the sandbox's own (stage 1, the init and its relay
  // thread under namespaces). Under namespaces RLIMIT_NPROC counts the user's processes in
  // the sandbox's user namespace, so it forks up to the bound; under Landlock it counts every
  // process of the user's, on the host and in every sandbox (other tests' too), so nobody's
  // bomb gets at most that many and maybe none.
  EXPECT_LE(bomb.forked, namespaces() ? 40 : 42) << bomb.line;
  if (namespaces() || root()) {
    EXPECT_GE(bomb.forked, 36) << bomb.line;
  }

  const ProcessResult second = bash("echo answered");
  EXPECT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(second.out, "answered\n");

  const ProcessResult ended = bomb.release();
  EXPECT_EQ(ended.code, 0) << ended.err;
  // Root's bomb met pids.max, which the end of the launch records; nobody's may have met
  // RLIMIT_NPROC first.
  if (root()) {
    EXPECT_NE(ended.err.find("rule=pids-limit: pids.max 43 reached ([limits] processes 40"),
              std::string::npos)
        << ended.err;
  }
}

TEST_P(LimitsTest, ACpuBoundHoldsASpinningPluginToItsQuota) {
  if (!configure_with_cgroup("cpu = 0.25\n")) GTEST_SKIP() << skip_;
  // Spins for 1.5 s of wall-clock time and prints the CPU time it got: unbounded, about 1.5 s
  // (less on a busy host, never more); held to a quarter of a CPU, about 0.375 s.
  const ProcessResult spin =
      run_process(argv({"/usr/bin/python3", "-c",
                        "import time\nstart = time.monotonic()\n"
                        "while time.monotonic() - start < 1.5: pass\nprint(time.process_time())"}),
                  options());
  ASSERT_EQ(spin.code, 0) << spin.err;
  EXPECT_LT(std::stod(spin.out), 0.75) << spin.out;
}

TEST_P(LimitsTest, WhatAPluginLeavesBehindEndsWithItAndItsCgroupGoes) {
  if (!configure_with_cgroup("")) GTEST_SKIP() << skip_;
  // A daemon in a session of its own, which outlives the plugin's exit unless its cgroup's
  // end takes it.
  const std::string marker = "7" + std::to_string(::getpid() % 100000) + ".25";
  const ProcessResult result =
      bash("setsid sleep " + marker + " < /dev/null > /dev/null 2>&1 & echo started");
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "started\n");
  const ProcessResult left = run_process({"/usr/bin/pgrep", "-f", "sleep " + marker}, {});
  EXPECT_EQ(left.out, "") << "the daemon outlived its plugin";
  if (delegated_) {
    EXPECT_EQ(delegated_->children(), 0u);
  }
}

TEST_P(LimitsTest, TheDefaultProcessBoundStopsAForkBomb) {
  // Root is bound by the cgroup's pids.max alone (RLIMIT_NPROC binds no uid 0).
  if (root() && !configure_with_cgroup("")) GTEST_SKIP() << skip_;
  if (!root()) configure("");
  ForkBomb bomb = start_fork_bomb(1500);
  ASSERT_FALSE(bomb.line.empty());
  EXPECT_EQ(bomb.refused, 1) << bomb.line;
  // 1024 processes and threads, the bomb itself among them (and, for root, 3 of the sandbox's
  // own on top); under Landlock RLIMIT_NPROC counts nobody's other processes too.
  EXPECT_LE(bomb.forked, 1026) << bomb.line;
  if (namespaces() || root()) {
    EXPECT_GE(bomb.forked, 1000) << bomb.line;
  }
  const ProcessResult ended = bomb.release();
  EXPECT_EQ(ended.code, 0) << ended.err;
}

TEST_P(LimitsTest, AThreadPidsMaxRefusedEndsThePluginWithOneRecordAndALine) {
  if (!root()) {
    GTEST_SKIP() << "as nobody RLIMIT_NPROC bounds the same tasks and may refuse first; "
                    "death_report_test.cpp tells that death";
  }
  // JSON records on stderr: run's line about the death comes beside them.
  if (!configure_with_cgroup("processes = 40\n\n[audit]\nformat = \"json\"\n")) {
    GTEST_SKIP() << skip_;
  }
  // Threads until one is refused, then abort(), as node does.
  const ProcessResult ended = run_process(argv({DEATH_PLUGIN, "threads"}), options());
  EXPECT_EQ(ended.code, 128 + SIGABRT) << ended.err;
  EXPECT_EQ(occurrences(ended.err, "\"rule\":\"pids-limit\""), 1u) << ended.err;
  EXPECT_EQ(occurrences(ended.err, "\n"), 3u) << ended.err;  // the plugin's, the record, the line
  EXPECT_NE(ended.err.find("sandbox-host: plugin death_plugin died: pids.max 43 reached ([limits] "
                           "processes 40 and 3 of the sandbox's own)"),
            std::string::npos)
      << ended.err;
}

TEST_P(LimitsTest, ALifetimeEndsThePluginAndWhatItStartedWithOneRecord) {
  for (const bool with_cgroup : {true, false}) {
    const std::string body = "lifetime = 2\n";
    if (with_cgroup) {
      if (!configure_with_cgroup(body)) continue;
    } else {
      configure("[limits]\ncgroup = \"off\"\n" + body);
    }
    const std::string marker =
        "8" + std::to_string(::getpid() % 100000) + (with_cgroup ? ".5" : ".75");
    const ProcessResult ran =
        bash("setsid sleep " + marker + " < /dev/null > /dev/null 2>&1 & sleep 30; echo slept");
    const std::string where = with_cgroup ? "in a cgroup" : "without a cgroup";
    EXPECT_EQ(ran.code, 128 + SIGKILL) << where << ": " << ran.out << ran.err;
    EXPECT_EQ(ran.out, "") << where;
    EXPECT_EQ(occurrences(ran.err,
                          "rule=lifetime-limit: ran for its lifetime of 2s: the host "
                          "stopped it"),
              1u)
        << where << ": " << ran.err;
    const ProcessResult left = run_process({"/usr/bin/pgrep", "-f", "sleep " + marker}, {});
    EXPECT_EQ(left.out, "") << where << ": what the plugin started outlived its lifetime";
    delegated_.reset();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LimitsTest, ::testing::ValuesIn(kLinuxBackendCases),
                         backend_case_name);

}  // namespace
}  // namespace sandbox_host::test
