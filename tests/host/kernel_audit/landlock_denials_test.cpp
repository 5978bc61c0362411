// The host's reading of the kernel's audit records: the text of a record, and the events
// of Landlock's refusals turned into records of the launches that were refused, from
// records as Linux 6.18 wrote them here, and from records a hostile plugin shapes.
#include <sandbox_host/host/kernel_audit/audit_text.hpp>
#include <sandbox_host/host/kernel_audit/landlock_denials.hpp>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sandbox_host::kernel_audit {
namespace {

namespace fs = std::filesystem;
using Clock = LandlockDenials::Clock;

// One event as the kernel sent it: a cat of a stage 1 (pid 21099) refused /etc/passwd.
const char *kAccess =
    "audit(1796574253.393:68): domain=1e42eaeda blockers=fs.read_file path=\"/etc/passwd\" "
    "dev=\"vda\" ino=810";
const char *kAllocated =
    "audit(1796574253.393:68): domain=1e42eaeda status=allocated mode=enforcing pid=21099 "
    "uid=65534 exe=\"/work/main/build/bin/sandbox-host\" comm=\"exe\"";
const char *kSyscall =
    "audit(1796574253.393:68): arch=c000003e syscall=257 success=no exit=-13 a0=ffffff9c "
    "a1=7ffcc2a955f0 a2=80000 a3=0 items=0 ppid=21098 pid=21100 auid=4294967295 uid=65534 "
    "gid=65534 euid=65534 suid=65534 fsuid=65534 egid=65534 sgid=65534 fsgid=65534 tty=(none) "
    "ses=4294967295 comm=\"cat\" exe=\"/usr/bin/cat\" key=(null)";
const char *kEnd = "audit(1796574253.393:68): ";

std::string event_text(const char *text, unsigned serial) {
  std::string out(text);
  const auto colon = out.find(':');
  const auto close = out.find("):");
  return out.replace(colon + 1, close - colon - 1, std::to_string(serial));
}

// The record of event serial as another domain's, or another creator's.
std::string other_domain(const char *text, unsigned serial, const std::string &domain,
                         const std::string &creator = "21099") {
  std::string out = event_text(text, serial);
  out.replace(out.find("1e42eaeda"), 9, domain);
  if (const auto pid = out.find("pid=21099"); pid != std::string::npos) {
    out.replace(pid + 4, 5, creator);
  }
  return out;
}

struct Written {
  std::string component, plugin, rule, attempted;
};

class Denials : public ::testing::Test {
 protected:
  std::shared_ptr<LandlockLaunch> launch(const std::string &plugin, const fs::path &audit) {
    return std::make_shared<LandlockLaunch>(
        plugin, "landlock", std::make_shared<AuditSink>(AuditFormat::json, audit.string()));
  }

  static std::vector<Written> written(const fs::path &audit) {
    std::vector<Written> out;
    std::ifstream in(audit);
    for (std::string line; std::getline(in, line);) {
      Poco::JSON::Parser parser;
      const auto object = parser.parse(line).extract<Poco::JSON::Object::Ptr>();
      out.push_back({object->getValue<std::string>("component"),
                     object->getValue<std::string>("plugin"), object->getValue<std::string>("rule"),
                     object->getValue<std::string>("attempted")});
    }
    return out;
  }

  void event(unsigned serial, bool with_domain = true, bool with_end = true) {
    denials_.read(kLandlockAccess, event_text(kAccess, serial), now_);
    if (with_domain) denials_.read(kLandlockDomain, event_text(kAllocated, serial), now_);
    denials_.read(kSyscallRecord, event_text(kSyscall, serial), now_);
    denials_.read(1327, event_text("audit(1:1): proctitle=636174", serial), now_);
    if (with_end) denials_.read(kEndOfEvent, event_text(kEnd, serial), now_);
  }

  fs::path dir_ = [] {
    char name[] = "/tmp/landlock-denials-XXXXXX";
    return fs::path(::mkdtemp(name));
  }();
  fs::path audit_ = dir_ / "audit.log";
  Clock::time_point now_ = Clock::now();
  LandlockDenials denials_;

  ~Denials() override { fs::remove_all(dir_); }
};

TEST(AuditText, SplitsTheSerialFromTheFields) {
  const auto text = split_audit_text(std::string(kAccess) + std::string(3, '\0'));
  ASSERT_TRUE(text);
  EXPECT_EQ(text->serial, 68u);
  EXPECT_EQ(text->fields.substr(0, 17), "domain=1e42eaeda ");
  EXPECT_EQ(text->fields.back(), '0');
  EXPECT_FALSE(split_audit_text("type=SYSCALL msg=audit(1.2:3): x=1"));
  EXPECT_FALSE(split_audit_text("audit(1.2:x): x=1"));
  EXPECT_FALSE(split_audit_text("audit(12): x=1"));
  EXPECT_FALSE(split_audit_text(""));
}

TEST(AuditText, FindsAFieldOnlyAtTheStartOfOne) {
  EXPECT_EQ(number_field(kSyscall, "pid"), 21100);
  EXPECT_EQ(number_field(kSyscall, "ppid"), 21098);
  EXPECT_EQ(number_field(kSyscall, "exit"), -13);
  EXPECT_EQ(hex_field(kAccess, "domain"), 0x1e42eaedaULL);
  EXPECT_EQ(field(kAccess, "blockers"), "fs.read_file");
  EXPECT_FALSE(field(kAccess, "main"));
  EXPECT_FALSE(number_field(kSyscall, "comm"));
  EXPECT_FALSE(hex_field("domain=", "domain"));
}

TEST(AuditText, DecodesAnUntrustedStringTheKernelWroteAsHex) {
  // "/tmp/ll x/f\"q", as the kernel wrote it: a space or a quote makes it hex.
  const std::string fields = "blockers=fs.read_file path=2F746D702F6C6C20782F662271 dev=\"vda\"";
  EXPECT_EQ(untrusted_field(fields, "path"), "/tmp/ll x/f\"q");
  EXPECT_EQ(untrusted_field(fields, "dev"), "vda");
  EXPECT_EQ(untrusted_field("key=(null)", "key"), "(null)");
  EXPECT_EQ(untrusted_field("comm=?", "comm"), "?");
}

TEST_F(Denials, AnEventOfAWatchedStageOneIsOneRecordOfItsPlugin) {
  denials_.watch(21099, launch("demo", audit_), now_);
  event(68);
  const auto found = written(audit_);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].component, "landlock");
  EXPECT_EQ(found[0].plugin, "demo");
  EXPECT_EQ(found[0].rule, "landlock: fs.read_file");
  // The refused process is the cat the plugin ran, not the stage 1 that made the domain.
  EXPECT_EQ(found[0].attempted,
            "pid 21100 (/usr/bin/cat), system call 257, was refused fs.read_file on "
            "path=\"/etc/passwd\" dev=\"vda\" ino=810; answered EACCES");
}

TEST_F(Denials, AnotherProgramsDomainIsNeverRecorded) {
  denials_.watch(4242, launch("demo", audit_), now_);
  event(68);
  denials_.expire(now_ + std::chrono::seconds(5));
  EXPECT_TRUE(written(audit_).empty());
}

TEST_F(Denials, ADomainSeenOnceClaimsItsLaterEvents) {
  denials_.watch(21099, launch("demo", audit_), now_);
  event(68);
  event(69, false);  // the kernel names a domain's creator only with its first refusal
  event(70, false);
  EXPECT_EQ(written(audit_).size(), 3u);
}

TEST_F(Denials, ALaunchWatchedJustAfterItsFirstRefusalStillClaimsIt) {
  // Spawned, refused, and read before the launch told the reader its pid.
  event(68);
  EXPECT_TRUE(written(audit_).empty());
  denials_.watch(21099, launch("demo", audit_), now_ - std::chrono::milliseconds(10));
  denials_.expire(now_ + std::chrono::seconds(2));
  ASSERT_EQ(written(audit_).size(), 1u);
  EXPECT_EQ(written(audit_)[0].plugin, "demo");
}

TEST_F(Denials, ADomainOfTheSamePidReadBeforeTheForkIsNotClaimed) {
  // A pid the kernel handed out again: the domain its earlier owner made is not the launch's,
  // however recent.
  event(68);
  denials_.watch(21099, launch("demo", audit_), now_ + std::chrono::milliseconds(1));
  event(69, false);
  denials_.expire(now_ + std::chrono::seconds(5));
  EXPECT_TRUE(written(audit_).empty());
}

TEST_F(Denials, AnUnclaimedDomainIsForgottenAfterItsWait) {
  event(68);
  denials_.expire(now_ + std::chrono::seconds(2));
  denials_.watch(21099, launch("demo", audit_), now_ - std::chrono::milliseconds(10));
  event(69, false);
  denials_.expire(now_ + std::chrono::seconds(5));
  EXPECT_TRUE(written(audit_).empty());
}

TEST_F(Denials, AnEventWithoutAnEndIsWrittenWhenTheLaunchSettles) {
  auto demo = launch("demo", audit_);
  denials_.watch(21099, demo, now_);
  denials_.read(kLandlockAccess, kAccess, now_);
  denials_.read(kLandlockDomain, kAllocated, now_);
  EXPECT_TRUE(written(audit_).empty());
  denials_.finish(*demo);
  const auto found = written(audit_);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].attempted,
            "a process of the sandbox, was refused fs.read_file on path=\"/etc/passwd\" "
            "dev=\"vda\" ino=810");
}

TEST_F(Denials, AnEventWithoutAnEndIsWrittenOnceItWaitedLongEnough) {
  denials_.watch(21099, launch("demo", audit_), now_);
  event(68, true, false);
  denials_.expire(now_ + std::chrono::milliseconds(100));
  EXPECT_TRUE(written(audit_).empty());
  denials_.expire(now_ + LandlockDenials::kEventWait + std::chrono::milliseconds(1));
  EXPECT_EQ(written(audit_).size(), 1u);
}

TEST_F(Denials, EachLaunchGetsItsOwnRecords) {
  const fs::path other = dir_ / "other.log";
  denials_.watch(21099, launch("demo", audit_), now_);
  denials_.watch(31099, launch("other", other), now_);
  event(68);
  denials_.read(kLandlockAccess, other_domain(kAccess, 90, "1e42eaedb"), now_);
  denials_.read(kLandlockDomain, other_domain(kAllocated, 90, "1e42eaedb", "31099"), now_);
  denials_.read(kEndOfEvent, event_text(kEnd, 90), now_);
  ASSERT_EQ(written(audit_).size(), 1u);
  ASSERT_EQ(written(other).size(), 1u);
  EXPECT_EQ(written(other)[0].plugin, "other");
}

TEST_F(Denials, AForgottenCreatorsNewDomainsAreNotClaimedButItsOldOneStill) {
  denials_.watch(21099, launch("demo", audit_), now_);
  event(68);
  denials_.forget(21099);
  event(69, false);  // a process the launch left, still in its domain
  denials_.read(kLandlockAccess, other_domain(kAccess, 70, "1e42eaedc"), now_);
  denials_.read(kLandlockDomain, other_domain(kAllocated, 70, "1e42eaedc"), now_);
  denials_.read(kEndOfEvent, event_text(kEnd, 70), now_);
  denials_.expire(now_ + std::chrono::seconds(5));
  EXPECT_EQ(written(audit_).size(), 2u);
}

TEST_F(Denials, ADeallocatedDomainClaimsNothingMore) {
  denials_.watch(21099, launch("demo", audit_), now_);
  event(68);
  denials_.read(kLandlockDomain, "audit(1.2:71): domain=1e42eaeda status=deallocated denials=1",
                now_);
  event(72, false);
  EXPECT_EQ(written(audit_).size(), 1u);
}

TEST_F(Denials, AHostilePathStaysOneFieldAndReachesTheRecordWhole) {
  denials_.watch(21099, launch("demo", audit_), now_);
  // "/tmp/x pid=1 exit=-1\n\"", which the kernel writes as hex: no field can be forged.
  std::string hostile = "/tmp/x pid=1 exit=-1\n\"";
  std::string hex;
  for (unsigned char c : hostile) {
    char two[3];
    std::snprintf(two, sizeof two, "%02X", c);
    hex += two;
  }
  denials_.read(
      kLandlockAccess,
      "audit(1.2:80): domain=1e42eaeda blockers=fs.read_file path=" + hex + " dev=\"vda\" ino=9",
      now_);
  denials_.read(kLandlockDomain, event_text(kAllocated, 80), now_);
  denials_.read(kSyscallRecord, event_text(kSyscall, 80), now_);
  denials_.read(kEndOfEvent, event_text(kEnd, 80), now_);
  const auto found = written(audit_);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].attempted.find("path=\"" + hostile + "\""), std::string::npos)
      << found[0].attempted;
  EXPECT_NE(found[0].attempted.find("pid 21100 "), std::string::npos);
}

TEST_F(Denials, WhatIsHeldIsBoundedWhateverTheKernelSends) {
  denials_.watch(21099, launch("demo", audit_), now_);
  // Refusals of another program's domain that never end: held up to the bound, then passed.
  for (unsigned serial = 1000; serial < 1000 + 4 * LandlockDenials::kMaxHeldEvents; ++serial) {
    denials_.read(kLandlockAccess, other_domain(kAccess, serial, "2e42eaeda"), now_);
  }
  EXPECT_LE(denials_.held_events(), LandlockDenials::kMaxHeldEvents);
  // And the launch's own refusals are still read.
  event(68);
  EXPECT_EQ(written(audit_).size(), 1u);
}

TEST_F(Denials, TextThatIsNoRecordIsPassedOver) {
  denials_.watch(21099, launch("demo", audit_), now_);
  for (const char *text : {"", "audit(", "audit(1.2:3)", "audit(1.2:3): domain=zz blockers=x",
                           "audit(1.2:3): blockers=fs.read_file", "garbage domain=1 pid=21099"}) {
    denials_.read(kLandlockAccess, text, now_);
    denials_.read(kLandlockDomain, text, now_);
    denials_.read(kSyscallRecord, text, now_);
    denials_.read(kEndOfEvent, text, now_);
  }
  denials_.expire(now_ + std::chrono::seconds(5));
  EXPECT_TRUE(written(audit_).empty());
  EXPECT_EQ(denials_.held_events(), 0u);
}

}  // namespace
}  // namespace sandbox_host::kernel_audit
