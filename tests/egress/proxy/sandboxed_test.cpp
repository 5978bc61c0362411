// Real clients inside a real proxied-mode sandbox (namespaces backend), as nobody and as
// root: curl and git reach the stand-in internet through `sandbox-host egress` alone, the
// inject host gets the token without the sandbox ever holding it, and nothing else leaves.
#include "egress_world.hpp"
#include "fixtures.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace sandbox_host::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class ProxiedSandbox : public ::testing::TestWithParam<uid_t> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the stand-in upstream listens on ports 80 and 443";
    world_ = std::make_unique<EgressWorld>();
    const uid_t user = GetParam();
    home_ = world_->dir() / "operator";
    for (const char *dir : {"run", "state", "shared"}) fs::create_directories(home_ / dir);
    const fs::path token_command = home_ / "token.sh";
    std::ofstream(token_command) << "#!/bin/sh\necho " << kTestToken << "\n";
    fs::permissions(token_command, fs::perms(0755));
    ::chown(home_.c_str(), user, user);
    for (const auto &entry : fs::recursive_directory_iterator(home_)) {
      ::chown(entry.path().c_str(), user, user);
    }
    fs::permissions(home_ / "run", fs::perms(0700));
    fs::permissions(world_->dir(), fs::perms(0755));
    fs::permissions(world_->upstream_ca(), fs::perms(0644));
    const std::string address = world_->upstream_address();
    std::ofstream(home_ / "config.toml")
        << "[broker]\nstate_dir = \"" << (home_ / "state").string() << "\"\n\n"
        << "[egress]\nlisten = \"127.0.0.1:" << free_loopback_port() << "\"\n"
        << "socket = \"" << (home_ / "state/egress.sock").string() << "\"\n"
        << "allow = [\"plain.test\", \"github.com\", \"api.github.com\"]\n"
        << "inject = [\"github.com\", \"api.github.com\"]\n"
        << "allow_addresses = [\"" << address << "\"]\n"
        << "resolve = { \"plain.test\" = [\"" << address << "\"], \"github.com\" = [\"" << address
        << "\"], \"api.github.com\" = [\"" << address << "\"] }\n"
        << "token_command = [\"" << token_command.string() << "\"]\n"
        << "upstream_ca_bundle = \"" << world_->upstream_ca().string() << "\"\n"
        << "runtime_dir = \"" << (home_ / "run").string() << "\"\n";
    proxy_ = std::make_unique<RunningProcess>(
        as_user({sandbox_host(), "egress", "--config", (home_ / "config.toml").string()}));
    for (int attempt = 0; attempt < 200 && !fs::exists(home_ / "state/egress.sock"); ++attempt) {
      std::this_thread::sleep_for(25ms);
    }
    ASSERT_TRUE(fs::exists(home_ / "state/egress.sock"));
  }

  std::string sandbox_host() const {
    return GetParam() == 0 ? SANDBOX_HOST_EXE : shared_install().sandbox_host();
  }

  std::vector<std::string> as_user(std::vector<std::string> argv) const {
    if (GetParam() == 0) return argv;
    std::vector<std::string> command = as_nobody();
    command.insert(command.end(), argv.begin(), argv.end());
    return command;
  }

  // argv run in a proxied sandbox of the namespaces backend.
  ProcessResult in_sandbox(const std::vector<std::string> &argv) const {
    std::vector<std::string> command{sandbox_host(),
                                     "run",
                                     "--config",
                                     (home_ / "config.toml").string(),
                                     "--network",
                                     "proxied",
                                     "--socket-dir",
                                     (home_ / "shared").string(),
                                     "--"};
    command.insert(command.end(), argv.begin(), argv.end());
    ProcessOptions options;
    options.env =
        std::vector<std::string>{"PATH=/usr/bin:/bin", "CLAWPATROL_SANDBOX_BACKEND=namespaces",
                                 "HOME=" + (home_ / "shared").string()};
    options.timeout = 60s;
    return run_process(as_user(command), options);
  }

  std::unique_ptr<EgressWorld> world_;
  fs::path home_;
  std::unique_ptr<RunningProcess> proxy_;
};

TEST_P(ProxiedSandbox, CurlReachesAnAllowedHostThroughTheProxyAlone) {
  const auto result =
      in_sandbox({"/usr/bin/curl", "-sS", "--max-time", "20", "http://plain.test/headers"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, R"(["Host", "plain.test"])")) << result.out;
  const auto socks = in_sandbox({"/usr/bin/sh", "-c",
                                 "HTTPS_PROXY=$ALL_PROXY exec /usr/bin/curl -sS --max-time 20 "
                                 "https://api.github.com/headers"});
  ASSERT_EQ(socks.code, 0) << socks.err;
  EXPECT_TRUE(contains(socks.out, "\"token ")) << socks.out;
}

TEST_P(ProxiedSandbox, TheInjectHostGetsTheTokenTheSandboxNeverHolds) {
  const auto result =
      in_sandbox({"/usr/bin/curl", "-sS", "--max-time", "20", "https://api.github.com/headers"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, std::string("\"token ") + kTestToken + "\"")) << result.out;
  const auto env = in_sandbox({"/usr/bin/env"});
  ASSERT_EQ(env.code, 0) << env.err;
  EXPECT_FALSE(contains(env.out, kTestToken)) << env.out;
  EXPECT_TRUE(contains(env.out, "HTTPS_PROXY=http://127.0.0.1:")) << env.out;
  EXPECT_TRUE(contains(env.out, "/clawpatrol-sandbox/egress/bundle.pem")) << env.out;
  // The egress directory is there to read, not to write.
  const auto write =
      in_sandbox({"/usr/bin/sh", "-c", "echo x > \"$(dirname \"$SSL_CERT_FILE\")/planted\""});
  EXPECT_NE(write.code, 0);
  EXPECT_FALSE(fs::exists(home_ / "run/clawpatrol-sandbox/egress/planted"));
}

TEST_P(ProxiedSandbox, GitClonesWithTheInjectedHeader) {
  const fs::path clone = home_ / "shared/clone";
  const auto result = in_sandbox({"/usr/bin/git", "-c", "credential.helper=", "clone", "-q",
                                  "https://github.com/git/repo.git", clone.string()});
  ASSERT_EQ(result.code, 0) << result.err;
  std::ifstream readme(clone / "README");
  std::string line;
  std::getline(readme, line);
  EXPECT_EQ(line, "served through the egress proxy");
}

TEST_P(ProxiedSandbox, NothingElseLeavesTheNamespace) {
  const std::string direct = "http://" + world_->upstream_address() + "/headers";
  const auto result =
      in_sandbox({"/usr/bin/curl", "-sS", "--max-time", "5", "--noproxy", "*", direct});
  EXPECT_NE(result.code, 0) << result.out;
  const auto denied =
      in_sandbox({"/usr/bin/curl", "-sS", "--max-time", "20", "-i", "http://denied.test/"});
  EXPECT_TRUE(contains(denied.out, "403 Forbidden")) << denied.out << denied.err;
}

INSTANTIATE_TEST_SUITE_P(Egress, ProxiedSandbox, ::testing::Values(uid_t{0}, kNobody),
                         [](const auto &info) { return info.param == 0 ? "Root" : "Nobody"; });

}  // namespace
}  // namespace sandbox_host::test
