// The seatbelt probe: on this Linux host for real, and its macOS path against stand-ins for
// sandbox-exec, since the real one cannot run here.
#include "linux_reason.hpp"

#include "fixtures.hpp"
#include "seatbelt_probe.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace sandbox_host::seatbelt::test {
namespace {

namespace fs = std::filesystem;

TEST(SeatbeltProbe, IsUnavailableOnLinuxWithTheReasonAndAHint) {
  ASSERT_FALSE(kBuiltForMacos);
  const ProbeReport report = probe_sandbox_exec({});
  EXPECT_FALSE(report.available);
  EXPECT_EQ(report.reason, expected_linux_reason());
  EXPECT_NE(report.hint.find("namespaces backend"), std::string::npos) << report.hint;
  EXPECT_EQ(report.warning, "");
}

TEST(SeatbeltProbe, NeverClaimsAvailabilityOffMacosEvenWithAWorkingStandIn) {
  SandboxExecProbe probe;
  probe.sandbox_exec = "/bin/true";
  probe.macos = false;
  const ProbeReport report = probe_sandbox_exec(probe);
  EXPECT_FALSE(report.available);
  EXPECT_EQ(report.reason,
            "seatbelt is macOS only: /bin/true exists, but this sandbox-host was built for another "
            "system");
}

// A stand-in for sandbox-exec, as if on macOS.
class StandIn {
 public:
  explicit StandIn(const std::string &script) : file_("#!/bin/sh\n" + script, "sandbox-exec") {
    fs::permissions(file_.path(), fs::perms::owner_all);
  }
  SandboxExecProbe probe() const {
    SandboxExecProbe probe;
    probe.sandbox_exec = file_.path().string();
    probe.macos = true;
    return probe;
  }
  std::string command() const {
    return file_.path().string() + " -p '(version 1)(allow default)' /usr/bin/true";
  }

 private:
  sandbox_host::test::TempFile file_;
};

TEST(SeatbeltProbe, OnMacosAWorkingSandboxExecIsAvailableWithWhatItDoesNotCover) {
  // Fails unless called exactly as the probe means to: an allow-default profile on true.
  StandIn stand_in(
      "[ $# -eq 3 ] && [ \"$1\" = -p ] && [ \"$2\" = '(version 1)(allow default)' ] || "
      "{ echo \"unexpected arguments: $*\" >&2; exit 64; }\nexec \"$3\"\n");
  const ProbeReport report = probe_sandbox_exec(stand_in.probe());
  EXPECT_TRUE(report.available) << report.reason;
  EXPECT_EQ(report.reason, "");
  for (const char *gap :
       {"deprecated by Apple", "no pid isolation", "no resource limits", "no system call filter",
        "loopback services", "has not yet been run on macOS"}) {
    EXPECT_NE(report.warning.find(gap), std::string::npos) << gap << ": " << report.warning;
  }
}

TEST(SeatbeltProbe, OnMacosAFailingSandboxExecGivesItsExitAndMessage) {
  StandIn stand_in(
      "echo 'sandbox-exec: sandbox_apply: Operation not permitted' >&2\necho more >&2\nexit 71\n");
  const ProbeReport report = probe_sandbox_exec(stand_in.probe());
  EXPECT_FALSE(report.available);
  EXPECT_EQ(report.reason, stand_in.command() +
                               " exited 71: sandbox-exec: sandbox_apply: Operation not permitted");
  EXPECT_NE(report.hint.find("inside another sandbox"), std::string::npos) << report.hint;
}

TEST(SeatbeltProbe, OnMacosAHungSandboxExecIsKilledAtTheTimeout) {
  StandIn stand_in("exec sleep 30\n");
  SandboxExecProbe probe = stand_in.probe();
  probe.timeout = std::chrono::milliseconds(200);
  const ProbeReport report = probe_sandbox_exec(probe);
  EXPECT_FALSE(report.available);
  EXPECT_EQ(report.reason, stand_in.command() + " did not finish within 200 ms");
}

TEST(SeatbeltProbe, OnMacosAKilledSandboxExecIsNamed) {
  StandIn stand_in("kill -9 $$\n");
  const ProbeReport report = probe_sandbox_exec(stand_in.probe());
  EXPECT_FALSE(report.available);
  EXPECT_EQ(report.reason, stand_in.command() + " was killed by signal 9");
}

TEST(SeatbeltProbe, OnMacosAMissingOrUnrunnableSandboxExecIsNamed) {
  SandboxExecProbe missing;
  missing.sandbox_exec = "/nonexistent/sandbox-exec";
  missing.macos = true;
  EXPECT_EQ(probe_sandbox_exec(missing).reason,
            "sandbox-exec not found: /nonexistent/sandbox-exec is missing");

  sandbox_host::test::TempFile not_executable("#!/bin/sh\n", "sandbox-exec");
  SandboxExecProbe probe;
  probe.sandbox_exec = not_executable.path().string();
  probe.macos = true;
  const ProbeReport report = probe_sandbox_exec(probe);
  EXPECT_FALSE(report.available);
  EXPECT_EQ(report.reason, "cannot run " + probe.sandbox_exec + ": Permission denied");
}

}  // namespace
}  // namespace sandbox_host::seatbelt::test
