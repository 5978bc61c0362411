// `sandbox-host egress` with [egress.parent]: every connection it allows is dialled through
// a real squid (Debian's package) that asks for Basic credentials and has ACLs of its own.
// The proxy runs as nobody from the operator's config; squid's access log is where the
// test sees what reached the parent, as whom, and what the parent itself refused.
#include "egress_world.hpp"
#include "fixtures.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace sandbox_host::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char *kSquid = "/usr/sbin/squid";
constexpr const char *kUser = "proxyuser";
constexpr const char *kPassword = "s3cret-Parent-pw";

std::string read_all(const fs::path &path) {
  std::ostringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

std::size_t count(const std::string &text, const std::string &part) {
  std::size_t found = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++found;
  return found;
}

class ParentProxy : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the stand-in upstream listens on ports 80 and 443";
    if (::access(kSquid, X_OK) != 0) {
      GTEST_SKIP() << kSquid << " is missing: scripts/setup.sh installs Debian's squid";
    }
    world_ = std::make_unique<EgressWorld>();
    fs::permissions(world_->dir(), fs::perms(0755));
    fs::permissions(world_->upstream_ca(), fs::perms(0644));
    address_ = world_->upstream_address();
    start_squid();
    home_ = world_->dir() / "operator";
    fs::create_directories(home_ / "run");
    fs::create_directories(home_ / "state");
  }

  void TearDown() override {
    stop_egress();
    if (squid_) {
      ::kill(squid_->pid(), SIGTERM);
      squid_->wait(10s);
    }
  }

  // squid on a loopback port of its own: Basic credentials from an htpasswd file, CONNECT
  // to ports 80 and 443 alone, every transaction in its access log.
  void start_squid() {
    squid_dir_ = world_->dir() / "squid";
    fs::create_directories(squid_dir_);
    // squid started as root works as user proxy, which writes its logs here.
    fs::permissions(squid_dir_, fs::perms(0777));
    const auto hashed = run_process({"/usr/bin/openssl", "passwd", "-apr1", kPassword});
    ASSERT_EQ(hashed.code, 0) << hashed.err;
    std::ofstream(squid_dir_ / "passwd") << kUser << ":" << hashed.out;
    fs::permissions(squid_dir_ / "passwd", fs::perms(0644));
    squid_port_ = free_loopback_port();
    const std::string dir = squid_dir_.string();
    std::ofstream(squid_dir_ / "squid.conf")
        << "http_port 127.0.0.1:" << squid_port_ << "\n"
        << "pid_filename " << dir << "/squid.pid\n"
        << "access_log stdio:" << dir << "/access.log\n"
        << "cache_log " << dir << "/cache.log\n"
        << "coredump_dir " << dir << "\n"
        << "cache deny all\ncache_mem 8 MB\nshutdown_lifetime 0 seconds\npinger_enable off\n"
        << "auth_param basic program /usr/lib/squid/basic_ncsa_auth " << dir << "/passwd\n"
        << "auth_param basic realm sandbox-host-test\n"
        << "acl authed proxy_auth REQUIRED\n"
        << "acl safe_ports port 80 443\n"
        << "acl CONNECT method CONNECT\n"
        << "http_access deny !authed\n"
        << "http_access deny CONNECT !safe_ports\n"
        << "http_access allow CONNECT authed\n"
        << "http_access deny all\n";
    squid_ = std::make_unique<RunningProcess>(
        std::vector<std::string>{kSquid, "-N", "-f", (squid_dir_ / "squid.conf").string()});
    for (int attempt = 0; attempt < 400 && !squid_answers(); ++attempt) {
      std::this_thread::sleep_for(25ms);
    }
    ASSERT_TRUE(squid_answers()) << read_all(squid_dir_ / "cache.log");
  }

  bool squid_answers() const {
    return run_process({"/usr/bin/curl", "-s", "-o", "/dev/null", "--max-time", "2",
                        "http://127.0.0.1:" + std::to_string(squid_port_) + "/"})
               .code == 0;
  }

  // `sandbox-host egress` as nobody; credential is the [egress.parent] lines for it.
  void start_egress(const std::string &credential) {
    port_ = free_loopback_port();
    const fs::path config = home_ / "config.toml";
    std::ofstream(config)
        << "[broker]\nstate_dir = \"" << (home_ / "state").string() << "\"\n\n"
        << "[egress]\nlisten = \"127.0.0.1:" << port_ << "\"\n"
        << "socket = \"" << (home_ / "state/egress.sock").string() << "\"\n"
        << "allow = [\"plain.test\", \"other.test:8443\", \"api.github.com\", \"loopy.test\"]\n"
        << "inject = [\"api.github.com\"]\n"
        << "allow_addresses = [\"" << address_ << "\"]\n"
        << "resolve = { \"plain.test\" = [\"" << address_ << "\"], \"other.test\" = [\"" << address_
        << "\"], \"api.github.com\" = [\"" << address_
        << "\"], \"loopy.test\" = [\"127.0.0.2\"] }\n"
        << "token_command = [\"" << script("token.sh", std::string("echo ") + kTestToken) << "\"]\n"
        << "upstream_ca_bundle = \"" << world_->upstream_ca().string() << "\"\n"
        << "runtime_dir = \"" << (home_ / "run").string() << "\"\n\n"
        << "[egress.parent]\nurl = \"http://127.0.0.1:" << squid_port_ << "\"\n"
        << credential;
    for (const auto &entry : fs::recursive_directory_iterator(home_)) {
      ::chown(entry.path().c_str(), kNobody, kNobody);
    }
    ::chown(home_.c_str(), kNobody, kNobody);
    fs::permissions(home_ / "run", fs::perms(0700));
    std::vector<std::string> argv = as_nobody();
    argv.insert(argv.end(),
                {shared_install().sandbox_host(), "egress", "--config", config.string()});
    egress_ = std::make_unique<RunningProcess>(argv);
    for (int attempt = 0; attempt < 400 && !fs::exists(home_ / "state/egress.sock"); ++attempt) {
      std::this_thread::sleep_for(25ms);
    }
  }

  // What the proxy said (the audit and its log) once stopped.
  std::string stop_egress() {
    if (!egress_) return {};
    ::kill(egress_->pid(), SIGTERM);
    const ProcessResult ended = egress_->wait(10s);
    egress_.reset();
    return ended.err;
  }

  std::string script(const std::string &name, const std::string &body) const {
    const fs::path path = home_ / name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(path, fs::perms(0755));
    return path.string();
  }

  ProcessResult curl(const std::vector<std::string> &args) const {
    std::vector<std::string> argv = as_nobody();
    argv.insert(argv.end(), {"/usr/bin/curl", "-sS", "--max-time", "20", "-x",
                             "http://127.0.0.1:" + std::to_string(port_)});
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv);
  }

  // squid's access log once it holds `connects` CONNECT lines (a tunnel is logged when it
  // closes); the readiness probe's lines are GETs.
  std::string access_log(std::size_t connects) const {
    std::string log;
    for (int attempt = 0; attempt < 200; ++attempt) {
      log = read_all(squid_dir_ / "access.log");
      if (count(log, " CONNECT ") >= connects) break;
      std::this_thread::sleep_for(25ms);
    }
    return log;
  }

  std::string file_credential(const std::string &credential) const {
    const fs::path file = home_ / "parent.credential";
    std::ofstream(file) << credential << "\n";
    fs::permissions(file, fs::perms(0600));
    return "credential_file = \"" + file.string() + "\"\n";
  }

  std::unique_ptr<EgressWorld> world_;
  std::string address_;
  fs::path home_, squid_dir_;
  std::uint16_t squid_port_ = 0, port_ = 0;
  std::unique_ptr<RunningProcess> squid_, egress_;
};

TEST_F(ParentProxy, ForwardedRequestsAndTunnelsGoThroughTheParentAsItsUserWithTheToken) {
  start_egress(file_credential(std::string(kUser) + ":" + kPassword));
  const auto plain = curl({"http://plain.test/headers"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  const fs::path bundle = home_ / "run/clawpatrol-sandbox/egress/bundle.pem";
  const auto injected = curl({"--cacert", bundle.string(), "https://api.github.com/headers"});
  ASSERT_EQ(injected.code, 0) << injected.err;
  // The token is added by this proxy, inside the tunnel the parent carried.
  EXPECT_TRUE(contains(injected.out, std::string("\"token ") + kTestToken + "\"")) << injected.out;
  const std::string said = stop_egress();
  // The parent was asked for the address this proxy checked, never for the name, and
  // knew the operator's user.
  const std::string log = access_log(2);
  EXPECT_EQ(count(log, " TCP_TUNNEL/200 "), 2u) << log;
  EXPECT_TRUE(contains(log, " CONNECT " + address_ + ":80 " + kUser + " ")) << log;
  EXPECT_TRUE(contains(log, " CONNECT " + address_ + ":443 " + kUser + " ")) << log;
  EXPECT_FALSE(contains(log, "plain.test")) << log;
  EXPECT_FALSE(contains(said, kPassword)) << said;
  EXPECT_FALSE(contains(said, kTestToken)) << said;
}

TEST_F(ParentProxy, ThisProxysRefusalsNeverReachTheParentAndTheParentsOwnAclsHold) {
  start_egress(file_credential(std::string(kUser) + ":" + kPassword));
  // Refused here: a host off the allow list, and one whose address the rules refuse.
  for (const char *url : {"http://denied.test/", "http://loopy.test/"}) {
    const auto refused = curl({"-i", url});
    EXPECT_TRUE(contains(refused.out, "403 Forbidden")) << url << ": " << refused.out;
  }
  // Allowed here, refused by squid's own ACL (CONNECT to ports 80 and 443 only).
  const auto by_parent = curl({"-i", "http://other.test:8443/"});
  EXPECT_TRUE(contains(by_parent.out, "403 Forbidden")) << by_parent.out;
  EXPECT_TRUE(contains(by_parent.out, "answered CONNECT " + address_ + ":8443 with 403"))
      << by_parent.out;
  const std::string said = stop_egress();
  const std::string log = access_log(1);
  EXPECT_EQ(count(log, " CONNECT "), 1u) << log;
  EXPECT_TRUE(contains(log, " TCP_DENIED/403 ")) << log;
  EXPECT_TRUE(contains(log, " CONNECT " + address_ + ":8443 " + kUser + " ")) << log;
  EXPECT_FALSE(contains(log, "127.0.0.2")) << log;
  EXPECT_TRUE(contains(said, "denied.test:80")) << said;
  EXPECT_TRUE(contains(said, "127.0.0.2")) << said;
  EXPECT_TRUE(contains(said, "the parent proxy 127.0.0.1:" + std::to_string(squid_port_) +
                                 " answered CONNECT " + address_ + ":8443 with 403"))
      << said;
}

TEST_F(ParentProxy, TheCredentialComesFromTheOperatorsCommand) {
  start_egress("credential_command = [\"" +
               script("credential.sh", std::string("echo ") + kUser + ":" + kPassword) + "\"]\n");
  const auto plain = curl({"http://plain.test/headers"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  const std::string said = stop_egress();
  EXPECT_TRUE(contains(said, "parent proxy credential read")) << said;
  EXPECT_FALSE(contains(said, kPassword)) << said;
  EXPECT_TRUE(contains(access_log(1), " CONNECT " + address_ + ":80 " + kUser + " "));
}

TEST_F(ParentProxy, AWrongOrMissingCredentialIsNamedAndNeverShown) {
  const std::string wrong = std::string(kUser) + ":not-" + kPassword;
  for (const std::string &credential : {file_credential(wrong), std::string()}) {
    start_egress(credential);
    const auto refused = curl({"-i", "http://plain.test/headers"});
    EXPECT_TRUE(contains(refused.out, "502 Bad Gateway")) << refused.out;
    EXPECT_TRUE(contains(refused.out, "with 407")) << refused.out;
    EXPECT_TRUE(contains(refused.out, "it wants credentials")) << refused.out;
    const std::string said = stop_egress();
    EXPECT_TRUE(contains(said, "with 407")) << said;
    EXPECT_FALSE(contains(said, wrong)) << said;
    EXPECT_FALSE(contains(refused.out, wrong)) << refused.out;
  }
  EXPECT_EQ(count(access_log(2), " TCP_DENIED/407 "), 2u);
}

TEST_F(ParentProxy, AParentThatIsDownIsA502NamingIt) {
  start_egress(file_credential(std::string(kUser) + ":" + kPassword));
  ::kill(squid_->pid(), SIGTERM);
  squid_->wait(10s);
  squid_.reset();
  const auto refused = curl({"-i", "http://plain.test/headers"});
  EXPECT_TRUE(contains(refused.out, "502 Bad Gateway")) << refused.out;
  EXPECT_TRUE(contains(
      refused.out, "cannot connect to the parent proxy 127.0.0.1:" + std::to_string(squid_port_)))
      << refused.out;
  EXPECT_TRUE(contains(refused.out, "Connection refused")) << refused.out;
}

}  // namespace
}  // namespace sandbox_host::test
