// "Why did my plugin die?": a plugin killed by a bound of the host's leaves one audit record
// naming the bound and the key that raises it, and `sandbox-host run` says so in one line on
// stderr. The seccomp filter's SIGSYS, file_size's SIGXFSZ and RLIMIT_NPROC under Landlock,
// each provoked for real under each backend as root and as nobody where it applies; a plugin
// that dies the same way on its own leaves no such record. explain_death() itself, which
// reads the evidence, is tested beside them on evidence made by hand.
#include "backend_case.hpp"
#include "fixtures.hpp"
#include "launch_case_fixture.hpp"
#include "process.hpp"

#include <sandbox_host/host/limits/death_report.hpp>
#include <sandbox_host/host/limits/plugin_cgroup.hpp>

#include <Poco/JSON/Parser.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace sandbox_host::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using User = BackendCase::User;

// ---- explain_death() on evidence made by hand --------------------------------------------

DeathOrder order_for(const std::string &backend) {
  DeathOrder order;
  order.plugin = "agent";
  order.backend = backend;
  return order;
}

DeathEvidence ended(int code, int signal, uid_t uid = 1000) {
  DeathEvidence evidence;
  evidence.code = code;
  evidence.signal = signal;
  evidence.uid = uid;
  return evidence;
}

TEST(ExplainDeath, SigxfszUnderAConfiningBackendIsFileSize) {
  DeathOrder order = order_for("landlock");
  order.limits.process.file_size = 1 << 20;
  const std::vector<Death> deaths = explain_death(order, ended(0, SIGXFSZ));
  ASSERT_EQ(deaths.size(), 1u);
  EXPECT_TRUE(deaths[0].explains_exit);
  EXPECT_EQ(deaths[0].record.component, "limits");
  EXPECT_EQ(deaths[0].record.rule, "limit-file-size");
  EXPECT_NE(deaths[0].record.attempted.find("SIGXFSZ (exit status 153)"), std::string::npos);
  EXPECT_NE(deaths[0].record.hint.find("file_size in [limits] or [plugins.agent.limits]"),
            std::string::npos);
  // Reported by the namespaces backend's init as 128 + the signal.
  EXPECT_EQ(explain_death(order_for("namespaces"), ended(128 + SIGXFSZ, 0)).size(), 1u);
  // Under Landlock the status is the plugin's own: an exit 153 is no signal.
  EXPECT_TRUE(explain_death(order_for("landlock"), ended(128 + SIGXFSZ, 0)).empty());
  // No rlimit under "off": a SIGXFSZ there is the plugin's own bound.
  EXPECT_TRUE(explain_death(order_for("off"), ended(0, SIGXFSZ)).empty());
}

TEST(ExplainDeath, SigsysIsTheSeccompFiltersUnderItsBackendsOnly) {
  const std::vector<Death> deaths = explain_death(order_for("namespaces"), ended(128 + SIGSYS, 0));
  ASSERT_EQ(deaths.size(), 1u);
  EXPECT_EQ(deaths[0].record.component, "namespaces");
  EXPECT_EQ(deaths[0].record.rule, "seccomp-kill");
  EXPECT_TRUE(explain_death(order_for("off"), ended(0, SIGSYS)).empty());
}

TEST(ExplainDeath, AnAbortIsPutDownToRlimitNprocOnlyNearTheBound) {
  DeathOrder order = order_for("landlock");
  order.limits.process.processes = 1024;
  DeathEvidence evidence = ended(0, SIGABRT);
  ASSERT_TRUE(needs_task_count(order, evidence));
  evidence.uid_tasks = 12;
  EXPECT_TRUE(explain_death(order, evidence).empty());
  evidence.uid_tasks = 1001;
  const std::vector<Death> deaths = explain_death(order, evidence);
  ASSERT_EQ(deaths.size(), 1u);
  EXPECT_EQ(deaths[0].record.rule, "limit-processes");
  EXPECT_EQ(deaths[0].record.attempted.rfind("likely RLIMIT_NPROC: ", 0), 0u);
  EXPECT_NE(deaths[0].record.attempted.find("had 1001 processes and threads"), std::string::npos);
  EXPECT_NE(deaths[0].record.hint.find("processes in [limits] or [plugins.agent.limits]"),
            std::string::npos);
  // RLIMIT_NPROC binds no uid 0; namespaces counts the sandbox's own tasks, which all ended.
  EXPECT_FALSE(needs_task_count(order, ended(0, SIGABRT, 0)));
  EXPECT_FALSE(needs_task_count(order_for("namespaces"), ended(0, SIGABRT)));
  EXPECT_FALSE(needs_task_count(order, ended(0, 0)));
  order.limits.process.processes = Limits::kUnlimited;
  EXPECT_FALSE(needs_task_count(order, ended(0, SIGABRT)));
}

TEST(ExplainDeath, TheCgroupsCountersAreRecordedAndExplainOnlyTheirOwnEnd) {
  DeathEvidence evidence = ended(0, SIGKILL);
  evidence.cgroup_hits.push_back({"memory-limit", "memory.max 64M reached", "raise memory"});
  std::vector<Death> deaths = explain_death(order_for("namespaces"), evidence);
  ASSERT_EQ(deaths.size(), 1u);
  EXPECT_TRUE(deaths[0].explains_exit);
  EXPECT_EQ(deaths[0].line(),
            "sandbox-host: plugin agent died: memory.max 64M reached (raise memory)");
  // A child the OOM killer stopped, while the plugin itself exited 0: recorded, not its end.
  evidence.signal = 0;
  deaths = explain_death(order_for("namespaces"), evidence);
  ASSERT_EQ(deaths.size(), 1u);
  EXPECT_FALSE(deaths[0].explains_exit);
}

TEST(ExplainDeath, TheWatchsKillIsTheEndAndIsNotRecordedTwice) {
  DeathEvidence evidence = ended(128 + SIGKILL, 0);
  evidence.host_stop =
      AuditRecord{"limits", "agent", "lifetime-limit", "ran for its lifetime", "raise it", true};
  const std::vector<Death> deaths = explain_death(order_for("namespaces"), evidence);
  ASSERT_EQ(deaths.size(), 1u);
  EXPECT_TRUE(deaths[0].explains_exit);
  EXPECT_TRUE(deaths[0].recorded);
  EXPECT_EQ(deaths[0].record.rule, "lifetime-limit");
}

TEST(ExplainDeath, TheUidsTasksAreCountedThreadsIncluded) {
  // This test process alone has a thread; the count is at least the sum of its own.
  EXPECT_GE(count_uid_tasks(::getuid()), 1u);
  EXPECT_EQ(count_uid_tasks(::getuid(), "/nonexistent"), 0u);
}

// ---- real deaths through `sandbox-host run` ------------------------------------------------

// Forks children that sleep until told to go, argv[1] of them, prints how many, then waits
// for its stdin to close: the uid's other processes, which RLIMIT_NPROC counts under Landlock.
constexpr const char *kSleepers = R"(
import os, sys
children = []
for _ in range(int(sys.argv[1])):
    pid = os.fork()
    if pid == 0:
        os.read(0, 1)
        os._exit(0)
    children.append(pid)
print("forked", len(children), flush=True)
sys.stdin.read()
for pid in children:
    os.waitpid(pid, 0)
)";

class DeathReportTest : public LaunchCaseTest {
 protected:
  DeathReportTest() : LaunchCaseTest("deaths") {}

  void SetUp() override {
    LaunchCaseTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // The audit file exists already, writable by the launching user.
    std::ofstream(audit_path()).flush();
    ::chmod(audit_path().c_str(), 0600);
    if (!root()) {
      ASSERT_EQ(::chown(audit_path().c_str(), kNobody, kNobody), 0);
    }
    plugin_ = root() ? std::string(DEATH_PLUGIN) : shared_install().add_binary(DEATH_PLUGIN);
  }

  bool landlock() const { return std::string(GetParam().backend) == "landlock"; }
  fs::path audit_path() const { return dir_ / "audit.jsonl"; }

  void configure(const std::string &limits) const {
    std::ofstream(dir_ / "config.toml")
        << "[audit]\nformat = \"json\"\npath = \"" << audit_path().string() << "\"\n\n[limits]\n"
        << limits;
    fs::permissions(dir_ / "config.toml", fs::perms(0644));
  }

  ProcessResult run(const std::vector<std::string> &command) const {
    return run_process(argv(command), options());
  }

  // The audit's records of rule, read from its JSON lines.
  std::vector<Poco::JSON::Object::Ptr> records(const std::string &rule) const {
    std::vector<Poco::JSON::Object::Ptr> found;
    std::ifstream in(audit_path());
    for (std::string line; std::getline(in, line);) {
      Poco::JSON::Parser parser;
      const auto record = parser.parse(line).extract<Poco::JSON::Object::Ptr>();
      if (record->getValue<std::string>("rule") == rule) found.push_back(record);
    }
    return found;
  }

  std::string audit() const {
    std::ifstream in(audit_path());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string plugin_;
};

TEST_P(DeathReportTest, ASystemCallOfAnotherAbiIsKilledByTheSeccompFilterAndSaysSo) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "int 0x80 is x86_64's way to a foreign ABI";
#endif
  configure("");
  const ProcessResult result = run({plugin_, "int80"});
  EXPECT_EQ(result.code, 128 + SIGSYS) << result.out << result.err;
  EXPECT_EQ(result.out, "");
  const auto found = records("seccomp-kill");
  ASSERT_EQ(found.size(), 1u) << audit();
  EXPECT_EQ(found[0]->getValue<std::string>("component"), GetParam().backend);
  EXPECT_EQ(found[0]->getValue<std::string>("plugin"), "death_plugin");
  EXPECT_NE(found[0]->getValue<std::string>("attempted").find("killed by the seccomp filter"),
            std::string::npos);
  EXPECT_NE(result.err.find("sandbox-host: plugin death_plugin died: killed by the seccomp "
                            "filter, SIGSYS (exit status 159)"),
            std::string::npos)
      << result.err;
}

TEST_P(DeathReportTest, AFileWrittenPastFileSizeIsKilledBySigxfszAndSaysSo) {
  configure("file_size = \"1M\"\n");
  // exec: the plugin itself is what writes, so that its own end is the SIGXFSZ.
  const ProcessResult result =
      run({"/bin/bash", "-c", "exec head -c 8M /dev/zero > " + (dir_ / "tmp/big").string()});
  EXPECT_EQ(result.code, 128 + SIGXFSZ) << result.err;
  EXPECT_EQ(fs::file_size(dir_ / "tmp/big"), 1u << 20);
  const auto found = records("limit-file-size");
  ASSERT_EQ(found.size(), 1u) << audit();
  EXPECT_EQ(found[0]->getValue<std::string>("component"), "limits");
  EXPECT_EQ(found[0]->getValue<std::string>("plugin"), "bash");
  EXPECT_NE(found[0]->getValue<std::string>("attempted").find("past file_size 1M (RLIMIT_FSIZE)"),
            std::string::npos);
  EXPECT_NE(found[0]->getValue<std::string>("hint").find(
                "raise file_size in [limits] or [plugins.bash.limits]"),
            std::string::npos);
  EXPECT_NE(result.err.find("sandbox-host: plugin bash died: killed by the kernel, SIGXFSZ"),
            std::string::npos)
      << result.err;
}

TEST_P(DeathReportTest, ALaunchTheHostsWatchStoppedSaysSoOnce) {
  configure("lifetime = 1\n");
  const ProcessResult result = run({"/bin/bash", "-c", "exec sleep 30"});
  EXPECT_EQ(result.code, 128 + SIGKILL) << result.err;
  ASSERT_EQ(records("lifetime-limit").size(), 1u) << audit();
  EXPECT_NE(result.err.find("sandbox-host: plugin bash died: ran for its lifetime of 1s: the "
                            "host stopped it (raise lifetime in [limits]"),
            std::string::npos)
      << result.err;
}

TEST_P(DeathReportTest, AnAbortNearTheUidsProcessBoundUnderLandlockIsPutDownToIt) {
  if (root()) GTEST_SKIP() << "RLIMIT_NPROC binds no process of uid 0";
  if (!landlock()) {
    GTEST_SKIP() << "under namespaces RLIMIT_NPROC counts the sandbox's own user namespace, "
                    "whose tasks all end with the plugin: nothing is left to count";
  }
  // nobody's other processes hold most of the bound, as a user's many processes held it in
  // the case that asked for this record; the plugin's threads then meet the rest.
  constexpr int kBound = 200;
  constexpr int kSleeperCount = 175;
  Pipe sleepers_stdin = make_pipe();
  ProcessOptions sleeper_options = options();
  sleeper_options.stdin_fd = sleepers_stdin.read.get();
  std::vector<std::string> sleepers = as_nobody();
  sleepers.insert(sleepers.end(),
                  {"/usr/bin/python3", "-c", kSleepers, std::to_string(kSleeperCount)});
  RunningProcess held(sleepers, sleeper_options);
  ASSERT_EQ(held.read_line(60s), "forked " + std::to_string(kSleeperCount));

  configure("processes = " + std::to_string(kBound) + "\n");
  const ProcessResult result = run({plugin_, "threads"});
  sleepers_stdin.write = UniqueFd();
  EXPECT_EQ(result.code, 128 + SIGABRT) << result.err;
  EXPECT_NE(result.err.find("Resource temporarily unavailable"), std::string::npos) << result.err;
  const auto found = records("limit-processes");
  ASSERT_EQ(found.size(), 1u) << audit();
  const std::string attempted = found[0]->getValue<std::string>("attempted");
  EXPECT_EQ(attempted.rfind("likely RLIMIT_NPROC: it ended with SIGABRT (exit status 134) "
                            "while uid 65534 had ",
                            0),
            0u)
      << attempted;
  EXPECT_NE(attempted.find(" of the 200 that processes allows"), std::string::npos) << attempted;
  EXPECT_NE(found[0]->getValue<std::string>("hint").find(
                "raise processes in [limits] or [plugins.death_plugin.limits]"),
            std::string::npos);
  EXPECT_NE(result.err.find("sandbox-host: plugin death_plugin died: likely RLIMIT_NPROC"),
            std::string::npos)
      << result.err;
}

TEST_P(DeathReportTest, APluginThatAbortsOnItsOwnLeavesNoRecordOfABound) {
  // A bound far above what nobody's processes hold, even with other tests' fork bombs.
  configure("processes = 4096\n");
  const ProcessResult result = run({plugin_, "abort"});
  EXPECT_EQ(result.code, 128 + SIGABRT) << result.err;
  EXPECT_EQ(result.err.find(" died: "), std::string::npos) << result.err;
  for (const char *rule :
       {"limit-processes", "seccomp-kill", "limit-file-size", "pids-limit", "memory-limit"}) {
    EXPECT_TRUE(records(rule).empty()) << rule << ": " << audit();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, DeathReportTest, ::testing::ValuesIn(kLinuxBackendCases),
                         backend_case_name);

}  // namespace
}  // namespace sandbox_host::test
