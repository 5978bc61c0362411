// `sandbox-host egress` and `sandbox-host serve` with an [egress] table, run as an
// unprivileged user the way an operator runs them: the token from the operator's command,
// the egress directory written, the proxy's memory out of reach, refusals in the audit.
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

std::string read_all(const fs::path &path) {
  std::ostringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

class EgressCommand : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the stand-in upstream listens on ports 80 and 443";
    world_ = std::make_unique<EgressWorld>();
    home_ = world_->dir() / "operator";
    fs::create_directories(home_ / "run");
    fs::create_directories(home_ / "state");
    const fs::path token_command = home_ / "token.sh";
    std::ofstream(token_command) << "#!/bin/sh\necho " << kTestToken << "\n";
    fs::permissions(token_command, fs::perms(0755));
    for (const auto &entry : fs::recursive_directory_iterator(home_)) {
      ::chown(entry.path().c_str(), kNobody, kNobody);
    }
    ::chown(home_.c_str(), kNobody, kNobody);
    fs::permissions(home_ / "run", fs::perms(0700));
    // The operator reads the test's CA and the stand-in's certificates.
    fs::permissions(world_->dir(), fs::perms(0755));
    fs::permissions(world_->upstream_ca(), fs::perms(0644));
    port_ = free_loopback_port();
    const std::string address = world_->upstream_address();
    std::ofstream(home_ / "config.toml")
        << "[broker]\nstate_dir = \"" << (home_ / "state").string() << "\"\n\n"
        << "[egress]\nlisten = \"127.0.0.1:" << port_ << "\"\n"
        << "socket = \"" << (home_ / "state/egress.sock").string() << "\"\n"
        << "allow = [\"plain.test\", \"api.github.com\"]\n"
        << "inject = [\"api.github.com\"]\n"
        << "allow_addresses = [\"" << address << "\"]\n"
        << "resolve = { \"plain.test\" = [\"" << address << "\"], \"api.github.com\" = [\""
        << address << "\"] }\n"
        << "token_command = [\"" << token_command.string() << "\"]\n"
        << "upstream_ca_bundle = \"" << world_->upstream_ca().string() << "\"\n"
        << "runtime_dir = \"" << (home_ / "run").string() << "\"\n"
        << "log_connections = true\n";
    std::vector<std::string> argv = as_nobody();
    argv.insert(argv.end(), {shared_install().sandbox_host(), GetParam(), "--config",
                             (home_ / "config.toml").string()});
    proxy_ = std::make_unique<RunningProcess>(argv);
    egress_dir_ = home_ / "run/clawpatrol-sandbox/egress";
    for (int attempt = 0; attempt < 200 && !answers(); ++attempt) std::this_thread::sleep_for(25ms);
  }

  bool answers() const {
    return curl_as_nobody({"-o", "/dev/null", "http://plain.test/headers"}).code == 0;
  }

  ProcessResult curl_as_nobody(const std::vector<std::string> &args) const {
    std::vector<std::string> argv = as_nobody();
    argv.insert(argv.end(), {"/usr/bin/curl", "-sS", "--max-time", "20", "-x",
                             "http://127.0.0.1:" + std::to_string(port_)});
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv);
  }

  std::unique_ptr<EgressWorld> world_;
  fs::path home_, egress_dir_;
  std::uint16_t port_ = 0;
  std::unique_ptr<RunningProcess> proxy_;
};

TEST_P(EgressCommand, InjectsTheTokenItsCommandReads) {
  // The egress directory's bundle is all a sandboxed client needs to trust the proxy.
  const auto result = curl_as_nobody(
      {"--cacert", (egress_dir_ / "bundle.pem").string(), "https://api.github.com/headers"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, std::string("\"token ") + kTestToken + "\"")) << result.out;
}

TEST_P(EgressCommand, WritesTheEgressDirectoryWithoutTheToken) {
  for (const char *name : {"ca.pem", "bundle.pem", "gpg", "gh/hosts.yml"}) {
    const fs::path file = egress_dir_ / name;
    ASSERT_TRUE(fs::exists(file)) << file;
    struct stat status {};
    ::stat(file.c_str(), &status);
    EXPECT_EQ(status.st_uid, kNobody) << file;
    EXPECT_EQ(status.st_mode & 0022, 0u) << file << ": writable by others";
    EXPECT_FALSE(contains(read_all(file), kTestToken)) << file;
  }
  EXPECT_TRUE(
      contains(read_all(egress_dir_ / "gpg"), shared_install().sandbox_host() + "' sandbox gpg"));
}

TEST_P(EgressCommand, KeepsItsMemoryOutOfReach) {
  // A process that is not dumpable has its /proc files owned by root, whatever its uid:
  // nobody's other processes cannot read its memory or environment.
  struct stat status {};
  ASSERT_EQ(::stat(("/proc/" + std::to_string(proxy_->pid()) + "/mem").c_str(), &status), 0);
  EXPECT_EQ(status.st_uid, 0u);
  std::ifstream limits("/proc/" + std::to_string(proxy_->pid()) + "/limits");
  std::string line;
  bool no_core = false;
  while (std::getline(limits, line)) {
    if (line.rfind("Max core file size", 0) == 0) no_core = contains(line, " 0 ");
  }
  EXPECT_TRUE(no_core);
}

TEST_P(EgressCommand, RefusalsGoToTheAuditAllowedOnesToTheLogAndTheProxyKeepsServing) {
  const auto refused = curl_as_nobody({"-i", "http://denied.test/"});
  EXPECT_TRUE(contains(refused.out, "403 Forbidden")) << refused.out;
  EXPECT_TRUE(answers());
  // root is another user to this proxy.
  EXPECT_NE(run_process({"/usr/bin/curl", "-s", "-x", "http://127.0.0.1:" + std::to_string(port_),
                         "http://plain.test/headers"})
                .code,
            0);
  ::kill(proxy_->pid(), SIGTERM);
  const auto ended = proxy_->wait(10s);
  EXPECT_EQ(ended.code, 0) << ended.err;
  EXPECT_TRUE(contains(ended.err, "denied.test:80")) << ended.err;
  EXPECT_TRUE(contains(ended.err, "belongs to uid 0")) << ended.err;
  // log_connections: the start-up probe's GET, said as allowed, without its path.
  EXPECT_TRUE(contains(ended.err,
                       "(uid " + std::to_string(kNobody) + ") -> plain.test:80: forwarded GET\n"))
      << ended.err;
  EXPECT_FALSE(contains(ended.err, "-> denied.test:80: forwarded")) << ended.err;
  EXPECT_FALSE(contains(ended.err, "/headers")) << ended.err;
  EXPECT_FALSE(contains(ended.err, kTestToken));
  EXPECT_FALSE(fs::exists(home_ / "state/egress.sock"));
}

// A Landlock plugin reaches the proxy's unix socket by path whatever its network; served, a
// plugin of network none would get the network and the proxy's credentials. It is closed
// unanswered, and the same client outside a sandbox is served.
TEST_P(EgressCommand, ALandlockSandboxGetsNothingOnTheUnixSocket) {
  const std::string plugin = shared_install().add_binary(HOSTILE_PLUGIN);
  const std::string socket = (home_ / "state/egress.sock").string();
  std::vector<std::string> direct = as_nobody();
  direct.insert(direct.end(), {plugin, "egress", socket, "plain.test"});
  const ProcessResult served = run_process(direct);
  EXPECT_EQ(served.out, "egress: HTTP/1.1 200 OK\n") << served.err;

  std::vector<std::string> sandboxed = as_nobody();
  sandboxed.insert(sandboxed.end(),
                   {shared_install().sandbox_host(), "run", "--backend", "landlock", "--network",
                    "none", "--", plugin, "egress", socket, "plain.test"});
  const ProcessResult refused = run_process(sandboxed);
  if (refused.code == 125 && contains(refused.err, "does not work here")) {
    GTEST_SKIP() << refused.err;
  }
  EXPECT_EQ(refused.out, "egress: closed unanswered\n") << refused.code << " " << refused.err;
  ::kill(proxy_->pid(), SIGTERM);
  const auto ended = proxy_->wait(10s);
  EXPECT_TRUE(contains(ended.err, "refused: the peer is a sandbox without namespaces of its own"))
      << ended.err;
}

INSTANTIATE_TEST_SUITE_P(Egress, EgressCommand, ::testing::Values("egress", "serve"));

}  // namespace
}  // namespace sandbox_host::test
