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

TEST(LandlockAudit, Abi7AndRootWithAuditReadCanReadTheDenials) {
  const LandlockAudit audit = landlock_audit(7, FakeProc("0", kAllCaps).root());
  EXPECT_TRUE(audit.denials_logged);
  EXPECT_TRUE(audit.readable);
  EXPECT_EQ(audit.summary,
            "denials logged to the kernel audit where audit is on (Landlock ABI 7 >= 7); this "
            "process can read the audit log (root, CAP_AUDIT_READ); sandbox-host does not copy "
            "them into its audit: run --learn names them");
}

TEST(LandlockAudit, RootWithoutAuditReadCannot) {
  const LandlockAudit audit = landlock_audit(7, FakeProc("0", kAllButAuditRead).root());
  EXPECT_TRUE(audit.denials_logged);
  EXPECT_FALSE(audit.readable);
  EXPECT_NE(audit.summary.find("root without CAP_AUDIT_READ"), std::string::npos);
}

TEST(LandlockAudit, AnotherUserCannotEvenWithTheCapability) {
  const LandlockAudit audit = landlock_audit(9, FakeProc("1000", kAllCaps).root());
  EXPECT_TRUE(audit.denials_logged);
  EXPECT_FALSE(audit.readable);
}

TEST(LandlockAudit, BelowAbi7NothingIsLogged) {
  const LandlockAudit audit = landlock_audit(6, FakeProc("0", kAllCaps).root());
  EXPECT_FALSE(audit.denials_logged);
  EXPECT_TRUE(audit.readable);
  EXPECT_EQ(audit.summary.rfind("denials not logged (Landlock ABI 6 < 7", 0), 0u) << audit.summary;
  EXPECT_FALSE(landlock_audit(0, FakeProc("0", kAllCaps).root()).denials_logged);
}

}  // namespace
}  // namespace sandbox_host
