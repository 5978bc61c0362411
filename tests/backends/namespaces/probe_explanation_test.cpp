// Probe's explanation for each host setting that refuses user namespaces, read from a fake
// root (its proc/sys, sys/kernel/security/apparmor, proc/self, the container runtimes' marks):
// this machine has neither AppArmor nor Debian's old unprivileged_userns_clone switch, so
// they cannot be produced for real here (the max and seccomp cases are, in
// tests/backends/namespaces/namespaces_probe_test.cpp, and a real container's in
// tests/system/container).
#include "userns_probe.hpp"
#include "userns_refusal.hpp"

#include "fixtures.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

namespace sandbox_host::namespaces {
namespace {

// A root directory with the files probe reads, as a host or a container shows them.
class FakeRoot {
 public:
  FakeRoot() : root_("", "unused") {}
  void set(const std::string &path, const std::string &value) {
    const auto file = root_.dir() / path;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << value << "\n";
  }
  void link(const std::string &path, const std::string &target) {
    const auto file = root_.dir() / path;
    std::filesystem::create_directories(file.parent_path());
    std::filesystem::create_symlink(target, file);
  }
  std::string root() const { return root_.dir().string(); }

 private:
  test::TempFile root_;
};

ProbeReport explained(const FakeRoot &proc, int error = EPERM) {
  ProbeReport report;
  explain_refusal(error, proc.root(), report);
  return report;
}

TEST(ProbeExplanation, MaxUserNamespacesZero) {
  FakeRoot proc;
  proc.set("proc/sys/user/max_user_namespaces", "0");
  proc.set("proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1");
  ProbeReport report = explained(proc, ENOSPC);
  EXPECT_EQ(report.reason,
            "creating a user namespace failed: No space left on device "
            "(user.max_user_namespaces=0)");
  EXPECT_EQ(report.hint, "sysctl -w user.max_user_namespaces=15000");
}

TEST(ProbeExplanation, DebiansUnprivilegedUsernsCloneSwitch) {
  FakeRoot proc;
  proc.set("proc/sys/user/max_user_namespaces", "15000");
  proc.set("proc/sys/kernel/unprivileged_userns_clone", "0");
  ProbeReport report = explained(proc);
  EXPECT_EQ(report.reason,
            "creating a user namespace failed: Operation not permitted "
            "(kernel.unprivileged_userns_clone=0)");
  EXPECT_EQ(report.hint, "sysctl -w kernel.unprivileged_userns_clone=1");
}

TEST(ProbeExplanation, AppArmorsRestriction) {
  FakeRoot proc;
  proc.set("proc/sys/user/max_user_namespaces", "15000");
  proc.set("proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1");
  ProbeReport report = explained(proc, EACCES);
  EXPECT_EQ(report.reason,
            "creating a user namespace failed: Permission denied (AppArmor "
            "restricts unprivileged user namespaces: "
            "kernel.apparmor_restrict_unprivileged_userns=1)");
  EXPECT_NE(report.hint.find("sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"),
            std::string::npos);
}

TEST(ProbeExplanation, SeccompInAContainer) {
  FakeRoot proc;
  proc.set("proc/self/status", "Name:\tsandbox-host\nSeccomp:\t2\nSeccomp_filters:\t1");
  ProbeReport report = explained(proc);
  EXPECT_NE(report.reason.find("(a seccomp filter on this process"), std::string::npos);
  EXPECT_NE(report.hint.find("seccomp=unconfined"), std::string::npos);
}

TEST(ProbeExplanation, NothingKnownSaysSoAndPointsAtLandlock) {
  FakeRoot proc;
  proc.set("proc/self/status", "Seccomp:\t0");
  ProbeReport report = explained(proc);
  EXPECT_EQ(report.reason, "creating a user namespace failed: Operation not permitted");
  EXPECT_NE(report.hint.find("landlock"), std::string::npos);
}

// Each hint is given only where its reading supports it: the sysctl's value, the runtime's
// mark, the unit's cgroup. Lines as the kernel writes them.
constexpr const char *kFiltered = "Name:\tsandbox-host\nSeccomp:\t2\nSeccomp_filters:\t1";

bool says(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(ProbeExplanation, AppArmorsRestrictionNamesTheProfileRouteForThisBinary) {
  FakeRoot proc;
  proc.set("proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1");
  proc.link("proc/self/exe", "/opt/sandbox-host/bin/sandbox-host");
  ProbeReport report = explained(proc, EACCES);
  EXPECT_TRUE(says(report.hint,
                   "profile sandbox-host /opt/sandbox-host/bin/sandbox-host "
                   "flags=(unconfined) { userns, }"))
      << report.hint;
  EXPECT_TRUE(says(report.hint, "apparmor_parser -r")) << report.hint;
  // Set to 0, the restriction is named nowhere.
  FakeRoot lifted;
  lifted.set("proc/sys/kernel/apparmor_restrict_unprivileged_userns", "0");
  lifted.set("proc/self/status", "Seccomp:\t0");
  ProbeReport plain = explained(lifted, EACCES);
  EXPECT_FALSE(says(plain.reason, "apparmor")) << plain.reason;
  EXPECT_FALSE(says(plain.hint, "userns,")) << plain.hint;
}

TEST(ProbeExplanation, AnAppArmorProfileOnThisProcessIsNamedWhereAppArmorIsOn) {
  FakeRoot proc;
  proc.set("sys/kernel/security/apparmor/profiles", "docker-default (enforce)");
  proc.set("proc/self/attr/apparmor/current", "docker-default (enforce)");
  proc.set("proc/self/status", kFiltered);
  ProbeReport report = explained(proc, EACCES);
  EXPECT_TRUE(says(report.reason,
                   "the AppArmor profile confining this process, docker-default "
                   "(enforce), refuses it"))
      << report.reason;
  EXPECT_TRUE(says(report.hint, "userns rule")) << report.hint;
  // The same label without AppArmor's securityfs is not read as AppArmor's: then the seccomp
  // filter is what the reading supports.
  FakeRoot no_apparmor;
  no_apparmor.set("proc/self/attr/apparmor/current", "docker-default (enforce)");
  no_apparmor.set("proc/self/status", kFiltered);
  EXPECT_TRUE(says(explained(no_apparmor, EACCES).reason, "seccomp filter"));
}

TEST(ProbeExplanation, TheNestingLimitOfUserNamespaces) {
  FakeRoot proc;
  proc.set("proc/sys/user/max_user_namespaces", "15000");
  ProbeReport report = explained(proc, EUSERS);
  EXPECT_TRUE(says(report.reason, "nested as deep as the kernel allows")) << report.reason;
  EXPECT_TRUE(says(report.hint, "shallower user namespace")) << report.hint;
  // EPERM is not the nesting limit.
  EXPECT_FALSE(says(explained(proc, EPERM).reason, "nested")) << explained(proc).reason;
}

// Since Linux 4.9 the nesting limit answers ENOSPC, as a count reached does: only a process
// in a nested user namespace can be that deep.
TEST(ProbeExplanation, NoSpaceInANestedUserNamespaceMayBeTheDepth) {
  FakeRoot proc;
  proc.set("proc/sys/user/max_user_namespaces", "15000");
  proc.set("proc/self/uid_map", "         0       1000          1");
  ProbeReport report = explained(proc, ENOSPC);
  EXPECT_TRUE(says(report.reason,
                   "nested as deep as the kernel allows, or "
                   "user.max_user_namespaces=15000 is reached"))
      << report.reason;
  EXPECT_TRUE(says(report.hint, "shallower user namespace")) << report.hint;
}

TEST(ProbeExplanation, MaxUserNamespacesReachedIsNotMaxUserNamespacesZero) {
  FakeRoot proc;
  proc.set("proc/self/uid_map", "         0          0 4294967295");
  proc.set("proc/sys/user/max_user_namespaces", "3");
  ProbeReport report = explained(proc, ENOSPC);
  EXPECT_TRUE(says(report.reason, "(user.max_user_namespaces=3 reached")) << report.reason;
  EXPECT_TRUE(says(report.hint, "user.max_user_namespaces=<more than 3>")) << report.hint;
}

TEST(ProbeExplanation, SeccompInAPodmanContainerNamesPodmansSetting) {
  FakeRoot proc;
  proc.set("proc/self/status", kFiltered);
  proc.set("run/.containerenv", "engine=\"podman-4.3.1\"");
  ProbeReport report = explained(proc);
  EXPECT_TRUE(says(report.reason, "(a seccomp filter on this process")) << report.reason;
  EXPECT_TRUE(says(report.hint,
                   "this is a podman container: run it with --security-opt "
                   "seccomp=<a profile that allows unshare"))
      << report.hint;
  EXPECT_FALSE(says(report.hint, "Docker")) << report.hint;
}

TEST(ProbeExplanation, SeccompInADockerContainerNamesDockersSettings) {
  FakeRoot proc;
  proc.set("proc/self/status", kFiltered);
  proc.set(".dockerenv", "");
  ProbeReport report = explained(proc);
  EXPECT_TRUE(says(report.hint, "this is a Docker container")) << report.hint;
  EXPECT_TRUE(says(report.hint, "--cap-add SYS_ADMIN or --privileged")) << report.hint;
}

TEST(ProbeExplanation, SeccompInAKubernetesPodNamesTheSeccompProfileField) {
  FakeRoot proc;
  proc.set("proc/self/status", kFiltered);
  proc.set("proc/self/environ", std::string("PATH=/bin\0KUBERNETES_SERVICE_HOST=10.0.0.1\0", 41));
  ProbeReport report = explained(proc);
  EXPECT_TRUE(says(report.hint, "securityContext.seccompProfile")) << report.hint;
}

TEST(ProbeExplanation, SeccompInASystemdServiceNamesItsUnit) {
  FakeRoot proc;
  proc.set("proc/self/status", kFiltered);
  proc.set("proc/self/cgroup", "0::/system.slice/gateway.service");
  ProbeReport report = explained(proc);
  EXPECT_TRUE(says(report.hint,
                   "gateway.service's: allow user namespaces in its unit "
                   "(RestrictNamespaces=, SystemCallFilter=)"))
      << report.hint;
  // Without a filter on the process, the unit is not blamed.
  FakeRoot unfiltered;
  unfiltered.set("proc/self/status", "Seccomp:\t0");
  unfiltered.set("proc/self/cgroup", "0::/system.slice/gateway.service");
  EXPECT_FALSE(says(explained(unfiltered).hint, "gateway.service"));
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
