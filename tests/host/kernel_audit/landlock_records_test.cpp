// Landlock's refusals, read from the kernel's audit into sandbox-host's, through the real
// `sandbox-host run` and the launch service under the Landlock backend: each refusal is one
// record naming the plugin, the rights it was refused, the path and the refused process;
// two hosts at once each record only their own launches; a loop is counted, not written;
// and where the audit is off, or the host is not root, nothing is claimed and probe says
// why. The kernel's audit is host-wide: each test turns it on and puts it back as it was,
// and the binary runs alone (RUN_SERIAL), so that no other test's launches meet it.
#include "audit_records.hpp"
#include "fixtures.hpp"
#include "process.hpp"
#include "serve_fixture.hpp"

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/kernel_audit/audit_netlink.hpp>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <gtest/gtest.h>

#include <linux/audit.h>
#include <linux/landlock.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sandbox_host::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using Record = AuditLine;

std::vector<Record> landlock_records(const std::string &audit) {
  return audit_records(audit, "landlock: ");
}

// "pid N ..." of a record; 0 when it names none.
long pid_of(const Record &record) {
  return record.attempted.rfind("pid ", 0) == 0 ? std::stol(record.attempted.substr(4)) : 0;
}

// AUDIT_SET enabled: the kernel's audit on or off for every process of the host.
bool set_kernel_audit(bool on) {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
  if (fd < 0) return false;
  struct {
    nlmsghdr header;
    audit_status status;
  } request{};
  request.header.nlmsg_len = sizeof request;
  request.header.nlmsg_type = AUDIT_SET;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  request.status.mask = AUDIT_STATUS_ENABLED;
  request.status.enabled = on ? 1 : 0;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  bool done = ::sendto(fd, &request, sizeof request, 0, reinterpret_cast<sockaddr *>(&kernel),
                       sizeof kernel) == sizeof request;
  alignas(nlmsghdr) char reply[512];
  const ssize_t got = done ? ::recv(fd, reply, sizeof reply, 0) : -1;
  done = got >= static_cast<ssize_t>(NLMSG_LENGTH(sizeof(nlmsgerr))) &&
         reinterpret_cast<nlmsghdr *>(reply)->nlmsg_type == NLMSG_ERROR &&
         static_cast<nlmsgerr *>(NLMSG_DATA(reinterpret_cast<nlmsghdr *>(reply)))->error == 0;
  ::close(fd);
  return done;
}

int landlock_abi() {
  return static_cast<int>(
      ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION));
}

class LandlockRecords : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: only root reads the kernel's audit";
    if (landlock_abi() < 7) {
      GTEST_SKIP() << "Landlock ABI " << landlock_abi() << ": it logs refusals from ABI 7";
    }
    const auto status = kernel_audit::kernel_audit_status();
    if (!status) GTEST_SKIP() << "the kernel's audit cannot be asked here (no CAP_AUDIT_CONTROL)";
    was_on_ = status->enabled;
    if (!set_kernel_audit(true)) GTEST_SKIP() << "the kernel's audit cannot be turned on here";
    plugin_ = shared_install().add_binary(LANDLOCK_DENIED);
    std::ofstream(config_) << "[audit]\npath = \"" << audit_.string()
                           << "\"\nformat = \"json\"\n[plugins.denied]\n";
    fs::permissions(home_.dir(),
                    fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
    fs::permissions(config_, fs::perms::owner_read | fs::perms::owner_write |
                                 fs::perms::group_read | fs::perms::others_read);
  }

  void TearDown() override {
    if (::geteuid() == 0 && !was_on_) set_kernel_audit(false);
  }

  std::vector<std::string> argv(const std::vector<std::string> &args, const fs::path &config,
                                bool nobody = false) const {
    std::vector<std::string> out = nobody ? as_nobody() : std::vector<std::string>{};
    for (const std::string &arg :
         {shared_install().sandbox_host(), std::string("run"), std::string("--config"),
          config.string(), std::string("--name"), std::string("denied"), std::string("--network"),
          std::string("none"), std::string("--"), plugin_}) {
      out.push_back(arg);
    }
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }

  static ProcessOptions options() {
    ProcessOptions options =
        with_env({"PATH=/usr/bin:/bin", "CLAWPATROL_SANDBOX_BACKEND=landlock"});
    options.timeout = 120s;
    return options;
  }

  ProcessResult run(const std::vector<std::string> &args, bool nobody = false) const {
    return run_process(argv(args, config_, nobody), options());
  }

  std::vector<Record> records() const { return landlock_records(read_file(audit_)); }

  bool was_on_ = true;
  TempFile home_{"", "unused"};
  fs::path config_ = home_.dir() / "config.toml";
  fs::path audit_ = home_.dir() / "audit.log";
  std::string plugin_;
};

TEST_F(LandlockRecords, ARefusedReadIsOneRecordOfThePluginThePathAndThePid) {
  const ProcessResult result = run({"read", "/etc/shadow"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "read=EACCES\n");
  const std::vector<Record> found = records();
  ASSERT_EQ(found.size(), 1u) << read_file(audit_);
  EXPECT_EQ(found[0].component, "landlock");
  EXPECT_EQ(found[0].plugin, "denied");
  EXPECT_EQ(found[0].rule, "landlock: fs.read_file");
  EXPECT_NE(found[0].attempted.find("path=\"/etc/shadow\""), std::string::npos)
      << found[0].attempted;
  EXPECT_NE(found[0].attempted.find("(" + plugin_ + ")"), std::string::npos) << found[0].attempted;
  EXPECT_NE(found[0].attempted.find("answered EACCES"), std::string::npos);
  EXPECT_GT(pid_of(found[0]), 1) << found[0].attempted;
  EXPECT_NE(found[0].hint.find("run --learn"), std::string::npos) << found[0].hint;
}

TEST_F(LandlockRecords, WhatTheSandboxGrantsLeavesNoRecord) {
  const ProcessResult result = run({"read", "/etc/passwd"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "read=allowed\n");
  EXPECT_TRUE(records().empty()) << read_file(audit_);
}

TEST_F(LandlockRecords, ACreateInADirectoryItMayOnlyReadNamesTheRightAndTheDirectory) {
  const ProcessResult result = run({"create", "/etc"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "create=EACCES\n");
  const std::vector<Record> found = records();
  ASSERT_EQ(found.size(), 1u) << read_file(audit_);
  EXPECT_EQ(found[0].rule, "landlock: fs.make_reg");
  EXPECT_NE(found[0].attempted.find("path=\"/etc\""), std::string::npos) << found[0].attempted;
  EXPECT_FALSE(fs::exists("/etc/landlock-denied"));
}

TEST_F(LandlockRecords, AChildsRefusalNamesTheChildAndThePlugin) {
  const ProcessResult result = run({"child-read", "/etc/shadow"});
  ASSERT_EQ(result.code, 0) << result.err;
  ASSERT_EQ(result.out.rfind("child=", 0), 0u) << result.out;
  const long child = std::stol(result.out.substr(6));
  EXPECT_NE(result.out.find("read=EACCES"), std::string::npos) << result.out;
  const std::vector<Record> found = records();
  ASSERT_EQ(found.size(), 1u) << read_file(audit_);
  EXPECT_EQ(found[0].plugin, "denied");
  EXPECT_EQ(pid_of(found[0]), child) << found[0].attempted;
}

TEST_F(LandlockRecords, AHostilePathIsOneLineAndWhole) {
  // A name the plugin chose: a newline, a quote, what looks like fields and an escape.
  const fs::path dir = home_.dir() / "secret";
  fs::create_directory(dir);
  const std::string name = "x\n\"pid=1 exit=0\x1b[2J";
  std::ofstream(dir / name) << "secret";
  const ProcessResult result = run({"read", (dir / name).string()});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "read=EACCES\n");
  const std::vector<Record> found = records();
  ASSERT_EQ(found.size(), 1u) << read_file(audit_);
  EXPECT_NE(found[0].attempted.find("path=\"" + (dir / name).string() + "\""), std::string::npos)
      << found[0].attempted;
  EXPECT_GT(pid_of(found[0]), 1);
  // One JSON line per record: the newline the plugin chose started none.
  std::size_t lines = 0;
  for (const char c : read_file(audit_)) lines += c == '\n' ? 1 : 0;
  EXPECT_EQ(lines, 1u) << read_file(audit_);
}

TEST_F(LandlockRecords, ALoopIsAnsweredEveryTimeAndCountedNotWritten) {
  const ProcessResult result = run({"loop", "5000", "/etc/shadow"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "refused=5000\n");
  const std::vector<Record> found = records();
  EXPECT_GE(found.size(), kAuditBurst) << read_file(audit_);
  EXPECT_LE(found.size(), kAuditBurst + 1);
  // And the next launch's one refusal is recorded as ever.
  fs::remove(audit_);
  EXPECT_EQ(run({"read", "/etc/shadow"}).out, "read=EACCES\n");
  EXPECT_EQ(records().size(), 1u) << read_file(audit_);
}

TEST_F(LandlockRecords, TwoHostsAtOnceEachRecordOnlyTheirOwnLaunch) {
  const fs::path other_audit = home_.dir() / "other.log";
  const fs::path other_config = home_.dir() / "other.toml";
  std::ofstream(other_config) << "[audit]\npath = \"" << other_audit.string()
                              << "\"\nformat = \"json\"\n[plugins.denied]\n";
  std::vector<std::unique_ptr<RunningProcess>> running;
  for (int i = 0; i < 4; ++i) {
    running.push_back(
        std::make_unique<RunningProcess>(argv({"read", "/etc/shadow"}, config_), options()));
    running.push_back(
        std::make_unique<RunningProcess>(argv({"read", "/etc/gshadow"}, other_config), options()));
  }
  for (auto &process : running) EXPECT_EQ(process->wait(120s).code, 0);
  const std::vector<Record> ours = records();
  const std::vector<Record> theirs = landlock_records(read_file(other_audit));
  ASSERT_EQ(ours.size(), 4u) << read_file(audit_);
  ASSERT_EQ(theirs.size(), 4u) << read_file(other_audit);
  for (const Record &record : ours) {
    EXPECT_NE(record.attempted.find("/etc/shadow"), std::string::npos) << record.attempted;
  }
  for (const Record &record : theirs) {
    EXPECT_NE(record.attempted.find("/etc/gshadow"), std::string::npos) << record.attempted;
  }
}

TEST_F(LandlockRecords, APluginsOwnDomainIsItsOwnAndAChildsIsNobodys) {
  // The plugin restricts itself further: what its own domain refuses is in its name alone.
  const ProcessResult nested = run({"nest", "/etc/passwd"});
  ASSERT_EQ(nested.code, 0) << nested.err;
  EXPECT_EQ(nested.out, "nested read=EACCES\n");
  std::vector<Record> found = records();
  ASSERT_EQ(found.size(), 1u) << read_file(audit_);
  EXPECT_EQ(found[0].plugin, "denied");
  // A child's domain was made by no stage 1: the sandbox did not refuse it, nothing says so.
  fs::remove(audit_);
  const ProcessResult child = run({"child-nest", "/etc/passwd"});
  ASSERT_EQ(child.code, 0) << child.err;
  EXPECT_NE(child.out.find("nested read=EACCES"), std::string::npos) << child.out;
  EXPECT_TRUE(records().empty()) << read_file(audit_);
}

TEST_F(LandlockRecords, WithTheAuditOffNothingIsRecordedAndTheLaunchIsAsEver) {
  ASSERT_TRUE(set_kernel_audit(false));
  const ProcessResult result = run({"read", "/etc/shadow"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "read=EACCES\n");
  EXPECT_TRUE(records().empty()) << read_file(audit_);
}

TEST_F(LandlockRecords, AHostThatIsNotRootRecordsNothingAndProbeSaysWhy) {
  ASSERT_EQ(::chown(home_.dir().c_str(), kNobody, kNobody), 0);
  const ProcessResult result = run({"read", "/etc/shadow"}, true);
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "read=EACCES\n");
  EXPECT_TRUE(records().empty()) << read_file(audit_);
  std::vector<std::string> probe = as_nobody();
  probe.insert(probe.end(),
               {shared_install().sandbox_host(), "probe", "--config", config_.string(), "--json"});
  const ProcessResult probed = run_process(probe, options());
  ASSERT_EQ(probed.code, 0) << probed.err;
  Poco::JSON::Parser parser;
  const auto audit =
      parser.parse(probed.out).extract<Poco::JSON::Object::Ptr>()->getObject("landlock_audit");
  EXPECT_FALSE(audit->getValue<bool>("recorded"));
  EXPECT_NE(audit->getValue<std::string>("summary").find("run --learn"), std::string::npos);
}

TEST_F(LandlockRecords, ProbeAsRootSaysTheyAreRecordedWhileTheAuditIsOn) {
  std::vector<std::string> probe = {shared_install().sandbox_host(), "probe", "--config",
                                    config_.string(), "--json"};
  Poco::JSON::Parser parser;
  const ProcessResult on = run_process(probe, options());
  ASSERT_EQ(on.code, 0) << on.err;
  const auto audit_on =
      parser.parse(on.out).extract<Poco::JSON::Object::Ptr>()->getObject("landlock_audit");
  EXPECT_TRUE(audit_on->getValue<bool>("recorded"));
  EXPECT_EQ(audit_on->getValue<std::string>("kernel_audit"), "on");
  ASSERT_TRUE(set_kernel_audit(false));
  const ProcessResult off = run_process(probe, options());
  ASSERT_EQ(off.code, 0) << off.err;
  parser.reset();
  const auto audit_off =
      parser.parse(off.out).extract<Poco::JSON::Object::Ptr>()->getObject("landlock_audit");
  EXPECT_FALSE(audit_off->getValue<bool>("recorded"));
  EXPECT_EQ(audit_off->getValue<std::string>("kernel_audit"), "off");
  EXPECT_NE(audit_off->getValue<std::string>("summary").find("auditctl -e 1"), std::string::npos);
}

TEST_F(LandlockRecords, ThroughTheServiceAPreparedSandboxsRecordNamesThePlugin) {
  Service service(User::root, "", "[plugins.denied]\nsandbox = \"landlock\"\n");
  const std::string plugin = service.install().add_binary(LANDLOCK_DENIED);
  ProcessOptions options;
  options.timeout = 120s;
  for (const char *path : {"/etc/shadow", "/etc/gshadow"}) {
    const ProcessResult result = run_process(
        service.launch({"--name", "denied", "--network", "none", "--", plugin, "read", path}),
        options);
    EXPECT_EQ(result.out, "read=EACCES\n") << result.err;
  }
  EXPECT_TRUE(service.answers());
  service.stop();
  const std::vector<Record> found = landlock_records(service.audit());
  ASSERT_EQ(found.size(), 2u) << service.audit();
  for (const Record &record : found) EXPECT_EQ(record.plugin, "denied");
  EXPECT_NE(found[0].attempted.find("/etc/shadow"), std::string::npos);
  EXPECT_NE(found[1].attempted.find("/etc/gshadow"), std::string::npos);
}

}  // namespace
}  // namespace sandbox_host::test
