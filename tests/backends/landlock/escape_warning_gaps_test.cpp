// The gaps the landlock backend's probe warning names, checked to exist (WarningSaysTruly_*):
// if one closes, the warning must change.
//
// Every test launches the real `sandbox-host run`, forced to the landlock backend, from a
// hostile environment, as root and as nobody, each both ways a sandbox is made, and has
// escape_plugin attempt one thing: what a plugin must not do is DENIED, what it may do is
// ALLOWED.
#include "landlock_escape.hpp"

namespace sandbox_host {
namespace {

using namespace landlock_escape;

// The gap the warning of this kernel's ABI names, for the WarningSaysTruly_ tests.
::testing::AssertionResult WarningNames(const std::string &gap) {
  const std::string warning = landlock::coverage_warning(landlock::kernel_abi());
  if (warning.find(gap) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "the warning does not name \"" << gap << "\": " << warning;
}

// ---- the gaps the warning names --------------------------------------------------------

TEST_P(LandlockEscape, WarningSaysTruly_UnixSocketsOfTheUserAreReachableByPath) {
  ASSERT_TRUE(WarningNames("connect(2) to the launching user's unix sockets by path"));
  ScopedPath home("/tmp/sandbox-host-test-agent-" + random_suffix());
  fs::create_directory(home.path());
  fs::permissions(home.path(), kWorldReadableDir);
  hand_to_user(home.path());
  std::unique_ptr<Listener> agent;
  const std::string socket_path = (home.path() / "agent.sock").string();
  ASSERT_TRUE(listen_unix(agent, socket_path, false));
  EXPECT_TRUE(Allowed(attempt({"connect-unix", socket_path})))
      << "connect(2) by path is restricted now: update coverage_warning.cpp";
  EXPECT_TRUE(anything_arrived(*agent));
}

TEST_P(LandlockEscape, WarningSaysTruly_StatTellsTheSizeOfFilesOutsideTheGrants) {
  ASSERT_TRUE(
      WarningNames("a plugin can stat(2) files outside its grants (existence, size, times)"));
  std::unique_ptr<ScopedPath> secret_holder;
  const fs::path secret = make_secret(secret_holder);
  EXPECT_EQ(attempt({"stat", secret.string()}).verdict,
            "ALLOWED size=" + std::to_string(fs::file_size(secret)))
      << "stat(2) is restricted now: update coverage_warning.cpp";
  EXPECT_TRUE(DeniedWith(attempt({"read", secret.string()}), "EACCES"));
}

TEST_P(LandlockEscape, WarningSaysTruly_HostPidsCanBeProbedButProcIsNotGranted) {
  ASSERT_TRUE(WarningNames("a plugin can probe the host's pids (kill(pid, 0)), not read /proc"));
  auto host = host_process("unused");
  const std::string pid = std::to_string(host->pid());
  EXPECT_TRUE(Allowed(attempt({"see-pid", pid})));
  // kill(pid, 0) tells a live pid (EPERM) from a free one (ESRCH).
  const pid_t reaped = ::fork();
  if (reaped == 0) ::_exit(0);
  ASSERT_GT(reaped, 0);
  ::waitpid(reaped, nullptr, 0);
  if (abi() >= 6) {
    EXPECT_TRUE(DeniedWith(attempt({"kill", pid, "0"}), "EPERM"));
  }
  EXPECT_TRUE(DeniedWith(attempt({"kill", std::to_string(reaped), "0"}), "ESRCH"));
  EXPECT_TRUE(DeniedWith(attempt({"list", "/proc/" + pid}), "EACCES"));
  // Its own /proc entry is the one granted.
  EXPECT_TRUE(Allowed(attempt({"read", "/proc/self/status"})));
}

TEST_P(LandlockEscape, WarningSaysTruly_TheHostsNameIsVisible) {
  ASSERT_TRUE(WarningNames("a plugin sees the host's name"));
  char host_name[256] = {};
  ASSERT_EQ(::gethostname(host_name, sizeof host_name - 1), 0);
  EXPECT_EQ(attempt({"hostname"}).verdict, std::string("ALLOWED ") + host_name);
}

}  // namespace
}  // namespace sandbox_host
