// Whether Landlock's denials reach the kernel audit here and this process could read them,
// from a fake /proc/self/status.
#include "fixtures.hpp"

#include <sandbox_host/host/landlock_audit.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace sandbox_host {
namespace {

class FakeProc {
 public:
  FakeProc(const std::string &uid, const std::string &cap_eff) : dir_("", "unused") {
    std::filesystem::create_directories(dir_.dir() / "self");
    std::ofstream(dir_.dir() / "self/status")
        << "Name:\tsandbox-host\nUid:\t" << uid << "\t" << uid << "\t" << uid << "\t" << uid
        << "\nCapEff:\t" << cap_eff << "\n";
  }
  std::string root() const { return dir_.dir().string(); }

 private:
  test::TempFile dir_;
};

// Every capability of a 6.x kernel (0-40), and the same without CAP_AUDIT_READ (37).
constexpr const char *kAllCaps = "000001ffffffffff";
constexpr const char *kAllButAuditRead = "000001dfffffffff";

TEST(LandlockAudit, Abi7RootWithAuditReadAndTheAuditOnAreRecorded) {
  const LandlockAudit audit =
      landlock_audit(7, KernelAuditState::on, FakeProc("0", kAllCaps).root());
  EXPECT_TRUE(audit.denials_logged);
  EXPECT_TRUE(audit.readable);
  EXPECT_TRUE(audit.recorded);
  EXPECT_EQ(audit.summary,
            "recorded: the kernel audit is on and this process reads it (root, CAP_AUDIT_READ), "
            "so each Landlock refusal of a launch is a record in sandbox-host's audit");
}

TEST(LandlockAudit, WithTheKernelAuditOffNothingIsRecordedAndItSaysHowToTurnItOn) {
  const LandlockAudit audit =
      landlock_audit(7, KernelAuditState::off, FakeProc("0", kAllCaps).root());
  EXPECT_TRUE(audit.readable);
  EXPECT_FALSE(audit.recorded);
  EXPECT_EQ(audit.summary,
            "not recorded: the kernel audit is off (auditctl -e 1 turns it on; sandbox-host "
            "never does): run --learn names them");
}

TEST(LandlockAudit, AnAuditThatCannotBeAskedIsNotClaimedRecorded) {
  const LandlockAudit audit =
      landlock_audit(7, KernelAuditState::unknown, FakeProc("0", kAllCaps).root());
  EXPECT_FALSE(audit.recorded);
  EXPECT_NE(audit.summary.find("whenever the kernel audit is on"), std::string::npos);
}

TEST(LandlockAudit, RootWithoutAuditReadCannot) {
  const LandlockAudit audit =
      landlock_audit(7, KernelAuditState::on, FakeProc("0", kAllButAuditRead).root());
  EXPECT_TRUE(audit.denials_logged);
  EXPECT_FALSE(audit.readable);
  EXPECT_FALSE(audit.recorded);
  EXPECT_EQ(audit.summary,
            "not recorded: this process cannot read the kernel audit (root without "
            "CAP_AUDIT_READ): run --learn names them");
}

TEST(LandlockAudit, AnotherUserCannotEvenWithTheCapability) {
  const LandlockAudit audit =
      landlock_audit(9, KernelAuditState::on, FakeProc("1000", kAllCaps).root());
  EXPECT_TRUE(audit.denials_logged);
  EXPECT_FALSE(audit.readable);
  EXPECT_FALSE(audit.recorded);
  EXPECT_NE(audit.summary.find("not root with CAP_AUDIT_READ"), std::string::npos);
}

TEST(LandlockAudit, BelowAbi7NothingIsLogged) {
  const LandlockAudit audit =
      landlock_audit(6, KernelAuditState::on, FakeProc("0", kAllCaps).root());
  EXPECT_FALSE(audit.denials_logged);
  EXPECT_TRUE(audit.readable);
  EXPECT_FALSE(audit.recorded);
  EXPECT_EQ(audit.summary,
            "not recorded: the kernel does not log them (Landlock ABI 6 < 7; "
            "Linux 6.15+ does): run --learn names them");
  EXPECT_FALSE(
      landlock_audit(0, KernelAuditState::on, FakeProc("0", kAllCaps).root()).denials_logged);
}

}  // namespace
}  // namespace sandbox_host
