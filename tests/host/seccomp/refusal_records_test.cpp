// The records of refused system calls, through the real `sandbox-host run` under each Linux
// backend, as root and as nobody: a refused call still returns EPERM and leaves one record
// naming the plugin, the backend, the rule and the pid; a loop of 100,000 and many threads
// are answered, every one, and written only up to the audit's burst, the rest counted in one
// record; and the launch service's supervisor outlives plugins that hammer it or die in the
// middle of a call, and still records the next plugin's refusal.
#include "audit_records.hpp"
#include "backend_case.hpp"
#include "fixtures.hpp"
#include "process.hpp"
#include "serve_fixture.hpp"

#include <sandbox_host/host/audit.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace sandbox_host::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using Record = AuditLine;

std::vector<Record> seccomp_records(const std::string &audit) {
  return audit_records(audit, "seccomp: ");
}

class RefusalRecords : public ::testing::TestWithParam<BackendCase> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: it launches as root and as nobody";
    plugin_ = shared_install().add_binary(REFUSED_CALLS);
    fs::permissions(home_.dir(),
                    fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
    if (!root()) {
      ASSERT_EQ(::chown(home_.dir().c_str(), 65534, 65534), 0);
    }
    std::ofstream(config_) << "[audit]\npath = \"" << audit_.string()
                           << "\"\nformat = \"json\"\n[plugins.refused]\n";
    fs::permissions(config_, fs::perms::owner_read | fs::perms::owner_write |
                                 fs::perms::group_read | fs::perms::others_read);
  }

  bool root() const { return GetParam().user == BackendCase::User::root; }

  ProcessResult run(const std::vector<std::string> &args) const {
    std::vector<std::string> argv = root() ? std::vector<std::string>{} : as_nobody();
    for (const std::string &arg :
         {shared_install().sandbox_host(), std::string("run"), std::string("--config"),
          config_.string(), std::string("--name"), std::string("refused"), std::string("--network"),
          std::string("none"), std::string("--"), plugin_}) {
      argv.push_back(arg);
    }
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessOptions options = with_env(
        {"PATH=/usr/bin:/bin", std::string("CLAWPATROL_SANDBOX_BACKEND=") + GetParam().backend});
    options.timeout = 120s;
    return run_process(argv, options);
  }

  std::vector<Record> records() const {
    std::ifstream in(audit_);
    std::stringstream text;
    text << in.rdbuf();
    return seccomp_records(text.str());
  }

  TempFile home_{"", "unused"};
  fs::path config_ = home_.dir() / "config.toml";
  fs::path audit_ = home_.dir() / "audit.log";
  std::string plugin_;
};

TEST_P(RefusalRecords, ARefusedCallReturnsEpermAndLeavesOneRecord) {
  const ProcessResult result = run({"once"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "keyctl=EPERM\n");
  const std::vector<Record> found = records();
  ASSERT_EQ(found.size(), 1u) << result.err;
  EXPECT_EQ(found[0].component, GetParam().backend);
  EXPECT_EQ(found[0].plugin, "refused");
  EXPECT_EQ(found[0].rule, "seccomp: keyctl");
  // The pid is the plugin's as the host sees it: a process that existed, never 0 or 1.
  const auto pid_at = found[0].attempted.find("pid ");
  ASSERT_NE(pid_at, std::string::npos) << found[0].attempted;
  EXPECT_GT(std::stol(found[0].attempted.substr(pid_at + 4)), 1);
  EXPECT_NE(found[0].attempted.find("answered EPERM"), std::string::npos);
  EXPECT_NE(found[0].hint.find("keyring"), std::string::npos) << found[0].hint;
}

TEST_P(RefusalRecords, AHundredThousandRefusalsAreAllAnsweredAndCountedNotWritten) {
  const ProcessResult result = run({"loop", "100000"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "refused=100000\n");
  const std::vector<Record> found = records();
  EXPECT_EQ(found.size(), kAuditBurst + 1);
  EXPECT_EQ(counted(found) + kAuditBurst, 100000u);
}

TEST_P(RefusalRecords, RefusalsFromManyThreadsAreEachAnswered) {
  const ProcessResult result = run({"threads", "32", "1000"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "refused=32000\n");
  const std::vector<Record> found = records();
  EXPECT_EQ(counted(found) + kAuditBurst, 32000u);
}

INSTANTIATE_TEST_SUITE_P(EachBackend, RefusalRecords, ::testing::ValuesIn(kLinuxBackendCases),
                         backend_case_name);

// The launch service's one supervisor serves every sandbox it starts: plugins that hammer it
// and that die mid-call leave it answering and recording the next plugin's refusal.
class ServiceSupervisor : public ::testing::TestWithParam<User> {};

TEST_P(ServiceSupervisor, OutlivesPluginsThatHammerItOrDieMidCall) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: it serves as root and as nobody";
  Service service(GetParam(), "", "[plugins.refused]\n");
  const std::string plugin = service.install().add_binary(REFUSED_CALLS);
  auto launch = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {"--name", "refused", "--network", "none", "--", plugin};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessOptions options;
    options.timeout = 120s;
    return run_process(service.launch(argv), options);
  };
  const ProcessResult hammer = launch({"threads", "16", "5000"});
  EXPECT_EQ(hammer.out, "refused=80000\n") << hammer.err;
  for (int i = 0; i < 5; ++i) {
    const ProcessResult died = launch({"die-mid-call", "8"});
    EXPECT_EQ(died.code, 128 + SIGKILL) << died.err;
  }
  const ProcessResult once = launch({"once"});
  EXPECT_EQ(once.out, "keyctl=EPERM\n") << once.err;
  EXPECT_TRUE(service.answers());
  service.stop();
  const std::vector<Record> found = seccomp_records(service.audit());
  // The hammer's burst, the five deaths' and the last one's: all of the one rule, with the
  // rest counted; what the dying plugins got answered before they died is counted too.
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found.back().rule, "seccomp: keyctl");
  // Prepared sandboxes all: each named before its launch was sent, so no record is of
  // "prepared".
  for (const Record &record : found) EXPECT_EQ(record.plugin, "refused") << record.attempted;
  EXPECT_GE(counted(found) + found.size(), 80000u + 1u);
}

INSTANTIATE_TEST_SUITE_P(AsUser, ServiceSupervisor, ::testing::Values(User::root, User::nobody),
                         [](const auto &info) { return user_name(info.param); });

}  // namespace
}  // namespace sandbox_host::test
