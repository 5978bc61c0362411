// Probe's explanation for each host setting that refuses user namespaces, read from a fake
// /proc: this machine has neither AppArmor's restriction nor Debian's old
// unprivileged_userns_clone switch, so they cannot be produced for real here (the max and
// seccomp cases are, in tests/integration/namespaces_probe_test.cpp).
#include "userns_probe.hpp"

#include "fixtures.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

namespace sandbox_host::namespaces {
namespace {

class FakeProc {
 public:
  FakeProc() : root_("", "unused") {}
  void set(const std::string &path, const std::string &value) {
    const auto file = root_.dir() / path;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << value << "\n";
  }
  std::string root() const { return root_.dir().string(); }

 private:
  test::TempFile root_;
};

ProbeReport explained(const FakeProc &proc, int error = EPERM) {
  ProbeReport report;
  explain_refusal(error, proc.root(), report);
  return report;
}

TEST(ProbeExplanation, MaxUserNamespacesZero) {
  FakeProc proc;
  proc.set("sys/user/max_user_namespaces", "0");
  proc.set("sys/kernel/apparmor_restrict_unprivileged_userns", "1");
  ProbeReport report = explained(proc, ENOSPC);
  EXPECT_EQ(report.reason,
            "creating a user namespace failed: No space left on device "
            "(user.max_user_namespaces=0)");
  EXPECT_EQ(report.hint, "sysctl -w user.max_user_namespaces=15000");
}

TEST(ProbeExplanation, DebiansUnprivilegedUsernsCloneSwitch) {
  FakeProc proc;
  proc.set("sys/user/max_user_namespaces", "15000");
  proc.set("sys/kernel/unprivileged_userns_clone", "0");
  ProbeReport report = explained(proc);
  EXPECT_EQ(report.reason,
            "creating a user namespace failed: Operation not permitted "
            "(kernel.unprivileged_userns_clone=0)");
  EXPECT_EQ(report.hint, "sysctl -w kernel.unprivileged_userns_clone=1");
}

TEST(ProbeExplanation, AppArmorsRestriction) {
  FakeProc proc;
  proc.set("sys/user/max_user_namespaces", "15000");
  proc.set("sys/kernel/apparmor_restrict_unprivileged_userns", "1");
  ProbeReport report = explained(proc, EACCES);
  EXPECT_EQ(report.reason,
            "creating a user namespace failed: Permission denied (AppArmor "
            "restricts unprivileged user namespaces: "
            "kernel.apparmor_restrict_unprivileged_userns=1)");
  EXPECT_NE(report.hint.find("sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"),
            std::string::npos);
}

TEST(ProbeExplanation, SeccompInAContainer) {
  FakeProc proc;
  proc.set("self/status", "Name:\tsandbox-host\nSeccomp:\t2\nSeccomp_filters:\t1");
  ProbeReport report = explained(proc);
  EXPECT_NE(report.reason.find("(a seccomp filter on this process"), std::string::npos);
  EXPECT_NE(report.hint.find("seccomp=unconfined"), std::string::npos);
}

TEST(ProbeExplanation, NothingKnownSaysSoAndPointsAtLandlock) {
  FakeProc proc;
  proc.set("self/status", "Seccomp:\t0");
  ProbeReport report = explained(proc);
  EXPECT_EQ(report.reason, "creating a user namespace failed: Operation not permitted");
  EXPECT_NE(report.hint.find("landlock"), std::string::npos);
}

// Whether probe may skip trying a fresh /proc: only where the host's hides nothing and its
// options are those a new one keeps. Lines as /proc/self/mountinfo writes them.
constexpr const char *kRoot = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n";
constexpr const char *kProc =
    "25 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:13 - proc proc rw\n";

TEST(FreshProcCertain, ForAHostProcWithNothingBelowIt) {
  EXPECT_TRUE(fresh_proc_certain(std::string(kRoot) + kProc));
  EXPECT_TRUE(fresh_proc_certain(
      std::string(kRoot) + kProc +
      "40 25 0:35 / /proc/sys/fs/binfmt_misc rw,relatime shared:20 - autofs systemd-1 rw\n"));
}

TEST(FreshProcCertain, NotForAContainersMaskedProc) {
  const std::string container =
      std::string(kRoot) + kProc +
      "30 25 0:22 /sys /proc/sys ro,nosuid,nodev,noexec,relatime - proc proc rw\n";
  EXPECT_FALSE(fresh_proc_certain(container));
  EXPECT_FALSE(fresh_proc_certain(std::string(kRoot) + kProc +
                                  "31 25 0:5 /null /proc/kcore rw,nosuid - devtmpfs udev rw\n"));
}

TEST(FreshProcCertain, NotForOptionsANewProcWouldNotKeep) {
  EXPECT_FALSE(fresh_proc_certain(
      std::string(kRoot) + "25 22 0:22 / /proc ro,nosuid,nodev,noexec,relatime - proc proc ro\n"));
  EXPECT_FALSE(fresh_proc_certain(
      std::string(kRoot) + "25 22 0:22 / /proc rw,nosuid,nodev,noexec,noatime - proc proc rw\n"));
  EXPECT_FALSE(fresh_proc_certain(kRoot));
  EXPECT_FALSE(fresh_proc_certain(""));
}

}  // namespace
}  // namespace sandbox_host::namespaces
