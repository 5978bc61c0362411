// Network proxied under the landlock backend: Landlock makes no network namespace, so a
// proxied plugin is refused, both where the host builds its command and in a sandbox
// prepared for proxied, and never runs with the host's network. Through the real
// `sandbox-host run`, forced to landlock, as root and as nobody.
#include "escape_harness.hpp"
#include "fixtures.hpp"
#include "landlock_abi.hpp"
#include "process.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace sandbox_host {
namespace {

using namespace test::escape;
using test::ProcessResult;

namespace fs = std::filesystem;

constexpr const char *kReason =
    "network \"proxied\" needs an empty network namespace whose only way out is the egress "
    "proxy, and Landlock confines a plugin without namespaces; it is refused rather than run "
    "with the host's network (the namespaces backend runs it)";

class LandlockProxied : public EscapeCorpus {
 protected:
  const char *backend() const override { return "landlock"; }

  void SetUp() override {
    if (landlock::kernel_abi() < 1) GTEST_SKIP() << "no Landlock on this kernel";
    EscapeCorpus::SetUp();
    if (IsSkipped()) return;
    hand_to_user(workspace_.dir());
    // The proxy's socket is there: the refusal is the backend's, not a missing proxy's.
    ASSERT_TRUE(listen_unix(proxy_, (proxy_home_.dir() / "egress.sock").string(), false));
    std::ofstream(config_.path()) << "[plugins.escape]\n\n[egress]\nsocket = \""
                                  << (proxy_home_.dir() / "egress.sock").string() << "\"\n";
  }

  test::TempFile proxy_home_{"", "unused"};
  std::unique_ptr<Listener> proxy_;
};

TEST_P(LandlockProxied, AProxiedPluginIsRefusedAndNeverRuns) {
  std::unique_ptr<Listener> host_service;
  const int port = listen_inet(host_service);
  ASSERT_GT(port, 0);
  const fs::path marker = socket_dir() / "ran";
  Launch launch;
  launch.network = "proxied";
  // Were it run, it would leave the marker and reach the host's loopback.
  const ProcessResult result =
      run("/bin/sh",
          {"-c", "touch " + marker.string() +
                     "; /usr/bin/curl -s http://127.0.0.1:" + std::to_string(port) + "/"},
          launch);
  EXPECT_EQ(result.code, 125) << result.err;
  EXPECT_EQ(result.out, "");
  const std::string refusal =
      prepared()
          ? std::string("clawpatrol-sandbox: network: ") + kReason
          : std::string("backend landlock: cannot build the command for plugin \"escape\": ") +
                kReason;
  EXPECT_NE(result.err.find(refusal), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_FALSE(anything_arrived(*host_service));
  EXPECT_FALSE(anything_arrived(*proxy_));
}

// Probe says so, in the landlock backend's warning (the same for both ways of setting up).
TEST_P(LandlockProxied, ProbeSaysProxiedIsRefused) {
  std::vector<std::string> argv;
  if (!root()) argv = test::as_nobody();
  for (const std::string &arg :
       {sandbox_host(), std::string("probe"), std::string("--config"), config_.path().string()}) {
    argv.push_back(arg);
  }
  const ProcessResult probe = test::run_process(argv, test::with_env(host_env()));
  EXPECT_EQ(probe.code, 0) << probe.err;
  EXPECT_NE(probe.out.find("chosen: landlock"), std::string::npos) << probe.out;
  EXPECT_NE(probe.out.find("  - no network namespace: network proxied is refused, never run "
                           "with the host's network\n"),
            std::string::npos)
      << probe.out;
}

INSTANTIATE_TEST_SUITE_P(AsUser, LandlockProxied, kEveryCase, case_name);

}  // namespace
}  // namespace sandbox_host
