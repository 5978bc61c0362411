// The egress proxy against real clients (curl, git, openssl) and a stand-in internet on
// loopback: what passes, every refusal, and where the token goes and where it never does.
#include "egress_world.hpp"
#include "fixtures.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sandbox_host::test {
namespace {

using namespace std::chrono_literals;

class EgressProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the stand-in upstream listens on ports 80 and 443";
    world_ = std::make_unique<EgressWorld>();
  }
  std::unique_ptr<EgressWorld> world_;
};

// A socket of `family` connected to address, each read bounded to 10 s; -1 if refused.
int connect_within_10s(int family, const void *address, socklen_t length) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, static_cast<const sockaddr *>(address), length) != 0) {
    ::close(fd);
    return -1;
  }
  timeval limit{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  return fd;
}

// A TCP connection to the proxy, for the tests that speak the protocol by hand.
int connect_to_proxy(std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return connect_within_10s(AF_INET, &address, sizeof address);
}

// A connection to the proxy's unix socket, where a write to a client that has gone fails
// with EPIPE at once (TCP answers a reset first).
int connect_to_proxy_socket(const std::filesystem::path &path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  return connect_within_10s(AF_UNIX, &address, sizeof address);
}

std::string read_until(int fd, const std::string &end) {
  std::string text;
  char chunk[4096];
  while (!contains(text, end)) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
  }
  return text;
}

TEST_F(EgressProxyTest, PlainHttpToAnAllowedHostPasses) {
  world_->start_proxy();
  const auto result = world_->curl({"http://plain.test/headers"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, R"(["Host", "plain.test"])")) << result.out;
  EXPECT_FALSE(contains(result.out, "Proxy-Connection")) << result.out;
  EXPECT_FALSE(contains(result.out, "Authorization")) << result.out;
}

TEST_F(EgressProxyTest, HttpsThroughConnectIsAnOpaqueTunnel) {
  world_->start_proxy();
  const auto result =
      world_->curl({"--cacert", world_->upstream_ca().string(), "https://plain.test/headers"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, R"("path": "/headers")")) << result.out;
  EXPECT_FALSE(contains(result.out, "Authorization"));
}

TEST_F(EgressProxyTest, Socks5hResolvesOnTheProxySide) {
  world_->start_proxy();
  const auto result =
      world_->curl({"--proxy", "socks5h://127.0.0.1:" + std::to_string(world_->port()), "--cacert",
                    world_->upstream_ca().string(), "https://plain.test/headers"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, R"("path": "/headers")")) << result.out;
}

TEST_F(EgressProxyTest, TheUnixSocketServesTheSameProxy) {
  world_->start_proxy();
  const std::string proxy = "socks5h://localhost" + world_->socket().string();
  const auto result = world_->curl({"--proxy", proxy, "http://plain.test/headers"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, R"(["Host", "plain.test"])")) << result.out;
}

TEST_F(EgressProxyTest, AHostOffTheAllowListIsRefusedWithItsRule) {
  world_->start_proxy();
  const auto plain = world_->curl({"-i", "http://denied.test/headers"});
  EXPECT_TRUE(contains(plain.out, "403 Forbidden")) << plain.out;
  EXPECT_TRUE(contains(plain.out, "denied.test")) << plain.out;
  EXPECT_TRUE(contains(plain.out, "no entry")) << plain.out;
  const auto tunnel = world_->curl({"-v", "https://denied.test/"});
  EXPECT_NE(tunnel.code, 0);
  EXPECT_TRUE(contains(tunnel.err, "403")) << tunnel.err;
  EXPECT_TRUE(world_->said_containing("denied.test:443")) << world_->said().size();
  const auto socks = world_->curl(
      {"--proxy", "socks5h://127.0.0.1:" + std::to_string(world_->port()), "http://denied.test/"});
  EXPECT_NE(socks.code, 0);
  EXPECT_TRUE(world_->said_containing("denied.test:80"));
}

// [egress] log_connections: one line per allowed connection, naming how it came in, and
// nothing of what it carried (no path, no header, no token); refused ones stay the say()
// lines they were.
TEST_F(EgressProxyTest, TheConnectionLogNamesEachAllowedConnectionAndNothingItCarried) {
  auto logged = std::make_shared<std::vector<std::string>>();
  auto mutex = std::make_shared<std::mutex>();
  world_->start_proxy([&](egress::EgressOptions &options) {
    options.log = [logged, mutex](const std::string &line) {
      std::lock_guard lock(*mutex);
      logged->push_back(line);
    };
  });
  const std::string socks = "socks5h://127.0.0.1:" + std::to_string(world_->port());
  ASSERT_EQ(world_->curl({"http://plain.test/headers?q=1"}).code, 0);
  ASSERT_EQ(world_->curl({"--cacert", world_->upstream_ca().string(), "https://plain.test/x"}).code,
            0);
  ASSERT_EQ(world_->curl({"--proxy", socks, "http://plain.test/y"}).code, 0);
  ASSERT_EQ(
      world_->curl({"--cacert", world_->proxy_ca().string(), "https://github.com/headers"}).code,
      0);
  EXPECT_TRUE(contains(world_->curl({"-i", "http://denied.test/headers"}).out, "403"));
  std::lock_guard lock(*mutex);
  const std::string peer = "127.0.0.1:";
  auto has = [&](const std::string &tail) {
    return std::any_of(logged->begin(), logged->end(), [&](const std::string &line) {
      return line.starts_with(peer) && line.ends_with(tail);
    });
  };
  EXPECT_TRUE(has("-> plain.test:80: forwarded GET")) << testing::PrintToString(*logged);
  EXPECT_TRUE(has("-> plain.test:443: CONNECT tunnel")) << testing::PrintToString(*logged);
  EXPECT_TRUE(has("-> plain.test:80: SOCKS5 tunnel")) << testing::PrintToString(*logged);
  EXPECT_TRUE(has("-> github.com:443: CONNECT, TLS terminated (an inject host)"))
      << testing::PrintToString(*logged);
  EXPECT_EQ(logged->size(), 4U) << "the refused connection was logged as allowed: "
                                << testing::PrintToString(*logged);
  for (const auto &line : *logged) {
    EXPECT_FALSE(contains(line, "/headers") || contains(line, "q=1") || contains(line, kTestToken))
        << line;
  }
}

TEST_F(EgressProxyTest, APortTheEntryDoesNotNameIsRefused) {
  world_->start_proxy();
  const auto result = world_->curl({"-i", "http://plain.test:8080/headers"});
  EXPECT_TRUE(contains(result.out, "403 Forbidden")) << result.out;
  EXPECT_TRUE(contains(result.out, "8080")) << result.out;
}

TEST_F(EgressProxyTest, ApexIsNotASubdomain) {
  world_->start_proxy([](egress::EgressOptions &options) {
    options.allow = egress::HostAllowList::parse({"*.test"});
  });
  EXPECT_TRUE(contains(world_->curl({"-i", "http://plain.test/headers"}).out, "200 OK"));
  const auto apex = world_->curl({"-i", "http://test/headers"});
  EXPECT_TRUE(contains(apex.out, "403 Forbidden")) << apex.out;
}

TEST_F(EgressProxyTest, LoopbackInEverySpellingIsRefused) {
  world_->start_proxy();
  // 127.0.0.2 is on the allow list, but not among the addresses the operator allowed.
  for (const std::string host : {"127.0.0.2", "127.2", "0x7f.0.0.2", "0177.0.0.2", "2130706434"}) {
    const auto result = world_->curl({"-i", "http://" + host + "/"});
    EXPECT_TRUE(contains(result.out, "403 Forbidden")) << host << ": " << result.out;
    EXPECT_TRUE(contains(result.out, "127.0.0.2")) << host << ": " << result.out;
    EXPECT_TRUE(contains(result.out, "loopback 127.0.0.0/8")) << host << ": " << result.out;
  }
  // An IPv6 spelling is another host to the allow list, and refused there already.
  const auto mapped = world_->curl({"-i", "http://[::ffff:127.0.0.2]/"});
  EXPECT_TRUE(contains(mapped.out, "403 Forbidden")) << mapped.out;
  EXPECT_TRUE(contains(mapped.out, "[::ffff:127.0.0.2]:80")) << mapped.out;
  const auto named = world_->curl({"-i", "http://loopy.test/"});
  EXPECT_TRUE(contains(named.out, "403 Forbidden")) << named.out;
  EXPECT_TRUE(contains(named.out, "loopback")) << named.out;
  // The proxy's own address is refused in its own words.
  const auto own = world_->curl({"-i", "http://0x7f.1/"});
  EXPECT_TRUE(contains(own.out, "this proxy's own address")) << own.out;
}

TEST_F(EgressProxyTest, ANameResolvingToAPublicAndAPrivateAddressIsRefused) {
  world_->start_proxy([&](egress::EgressOptions &options) {
    options.resolve["plain.test"].push_back(*egress::parse_ip_literal("10.1.2.3"));
  });
  const auto result = world_->curl({"-i", "http://plain.test/headers"});
  EXPECT_TRUE(contains(result.out, "403 Forbidden")) << result.out;
  EXPECT_TRUE(contains(result.out, "10.1.2.3")) << result.out;
}

TEST_F(EgressProxyTest, TheProxyAddsTheTokenForInjectHostsAndReplacesTheClients) {
  world_->start_proxy();
  const auto api =
      world_->curl({"--cacert", world_->proxy_ca().string(), "-H",
                    "Authorization: Bearer the-clients-own", "https://api.github.com/headers"});
  ASSERT_EQ(api.code, 0) << api.err;
  EXPECT_TRUE(contains(api.out, std::string("\"token ") + kTestToken + "\"")) << api.out;
  EXPECT_FALSE(contains(api.out, "the-clients-own")) << api.out;
  const auto git =
      world_->curl({"--cacert", world_->proxy_ca().string(), "https://github.com/headers"});
  ASSERT_EQ(git.code, 0) << git.err;
  EXPECT_TRUE(contains(git.out, "\"Basic ")) << git.out;
}

TEST_F(EgressProxyTest, TheProxysCaIsTrustedForTheInjectHostsAlone) {
  world_->start_proxy();
  // plain.test is tunnelled: its certificate is the stand-in's, which the proxy's CA does
  // not vouch for.
  const auto result =
      world_->curl({"--cacert", world_->proxy_ca().string(), "https://plain.test/headers"});
  EXPECT_EQ(result.code, 60) << result.err;  // curl: peer certificate cannot be authenticated
}

TEST_F(EgressProxyTest, AnInnerHostOtherThanTheTargetIsRefused) {
  world_->start_proxy();
  const auto result = world_->curl({"-i", "--cacert", world_->proxy_ca().string(), "-H",
                                    "Host: github.com", "https://api.github.com/headers"});
  EXPECT_TRUE(contains(result.out, "421")) << result.out;
  EXPECT_FALSE(contains(result.out, kTestToken));
  EXPECT_TRUE(world_->said_containing("Host differs"));
}

TEST_F(EgressProxyTest, AServerNameOtherThanTheTargetIsRefused) {
  world_->start_proxy();
  const int fd = connect_to_proxy(world_->port());
  ASSERT_GE(fd, 0);
  const std::string connect =
      "CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n";
  ASSERT_EQ(::send(fd, connect.data(), connect.size(), 0), static_cast<ssize_t>(connect.size()));
  EXPECT_TRUE(contains(read_until(fd, "\r\n\r\n"), " 200 "));
  SSL_CTX *context = SSL_CTX_new(TLS_client_method());
  SSL *ssl = SSL_new(context);
  SSL_set_tlsext_host_name(ssl, "github.com");
  SSL_set_fd(ssl, fd);
  EXPECT_NE(SSL_connect(ssl), 1);
  SSL_free(ssl);
  SSL_CTX_free(context);
  ::close(fd);
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(world_->said_containing("differs from the CONNECT target")) << world_->said().size();
}

// A TLS client inside a CONNECT tunnel to host, offering alpn (empty: none); null when the
// handshake failed.
struct TunnelTls {
  int fd = -1;
  SSL_CTX *context = nullptr;
  SSL *ssl = nullptr;
  bool connected = false;
  TunnelTls(std::uint16_t port, const std::string &host, const std::string &ca,
            const std::vector<unsigned char> &alpn)
      : TunnelTls(connect_to_proxy(port), host, ca, alpn) {}
  // Over a connection to the proxy already made.
  TunnelTls(int connection, const std::string &host, const std::string &ca,
            const std::vector<unsigned char> &alpn)
      : fd(connection) {
    const std::string connect =
        "CONNECT " + host + ":443 HTTP/1.1\r\nHost: " + host + ":443\r\n\r\n";
    ::send(fd, connect.data(), connect.size(), 0);
    if (!contains(read_until(fd, "\r\n\r\n"), " 200 ")) return;
    context = SSL_CTX_new(TLS_client_method());
    SSL_CTX_load_verify_locations(context, ca.c_str(), nullptr);
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
    ssl = SSL_new(context);
    SSL_set_tlsext_host_name(ssl, host.c_str());
    SSL_set1_host(ssl, host.c_str());
    if (!alpn.empty()) SSL_set_alpn_protos(ssl, alpn.data(), static_cast<unsigned>(alpn.size()));
    SSL_set_fd(ssl, fd);
    connected = SSL_connect(ssl) == 1;
  }
  std::string exchange(const std::string &bytes) {
    SSL_write(ssl, bytes.data(), static_cast<int>(bytes.size()));
    std::string answer;
    char chunk[4096];
    int n;
    while ((n = SSL_read(ssl, chunk, sizeof chunk)) > 0)
      answer.append(chunk, static_cast<std::size_t>(n));
    return answer;
  }
  ~TunnelTls() {
    if (ssl != nullptr) SSL_free(ssl);
    if (context != nullptr) SSL_CTX_free(context);
    if (fd >= 0) ::close(fd);
  }
};

// SIGPIPE as a program that sets nothing has it, in this thread and the threads it starts,
// until the scope ends.
class SigpipeAtDefault {
 public:
  SigpipeAtDefault() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_UNBLOCK, &pipe, &saved_mask_);
    saved_action_ = ::signal(SIGPIPE, SIG_DFL);
  }
  ~SigpipeAtDefault() {
    ::signal(SIGPIPE, saved_action_);
    pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
  }
  SigpipeAtDefault(const SigpipeAtDefault &) = delete;
  SigpipeAtDefault &operator=(const SigpipeAtDefault &) = delete;

 private:
  sigset_t saved_mask_{};
  sighandler_t saved_action_ = SIG_DFL;
};

// Reads a response head and then body bytes until `bytes` of the body arrived; what came.
std::size_t read_response_until(const std::function<ssize_t(char *, std::size_t)> &read,
                                std::size_t bytes) {
  std::string head;
  std::size_t body = 0;
  char chunk[16 << 10];
  while (body < bytes) {
    const ssize_t n = read(chunk, std::min(sizeof chunk, bytes - body));
    if (n <= 0) break;
    std::string_view got(chunk, static_cast<std::size_t>(n));
    if (head.find("\r\n\r\n") == std::string::npos) {
      head.append(got);
      const std::size_t end = head.find("\r\n\r\n");
      if (end != std::string::npos) body = head.size() - end - 4;
      continue;
    }
    body += got.size();
  }
  return body;
}

TEST_F(EgressProxyTest, AClientThatStopsReadingCostsItsConnectionNotTheProxy) {
  // Each client stops reading (shutdown(SHUT_RD) on a unix socket tells the proxy's end at
  // once) while the upstream pauses, so the proxy's next write to it fails with EPIPE and
  // raises SIGPIPE in the thread that writes: a splice of the relay thread for a tunnel
  // whose download went bulk, an SSL_write of a session thread for a terminated inject
  // host. `sandbox-host egress` leaves SIGPIPE at its default, and so does this test for the
  // threads the proxy starts, so a proxy thread that took it would end the test (whatever
  // an earlier test in this process set, and though test_support already unblocks it).
  const SigpipeAtDefault production_disposition;
  world_->start_proxy();
  constexpr std::size_t kBytes = 8 << 20;  // the first half fills the relay's copy buffer
  for (int i = 0; i < 3; ++i) {
    const int fd = connect_to_proxy_socket(world_->socket());
    ASSERT_GE(fd, 0);
    const std::string connect = "CONNECT plain.test:80 HTTP/1.1\r\nHost: plain.test:80\r\n\r\n";
    ASSERT_EQ(::send(fd, connect.data(), connect.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(connect.size()));
    ASSERT_TRUE(contains(read_until(fd, "\r\n\r\n"), " 200 "));
    const std::string download = "GET /big?bytes=" + std::to_string(kBytes) +
                                 "&pause=0.3 HTTP/1.1\r\nHost: plain.test\r\n\r\n";
    ASSERT_EQ(::send(fd, download.data(), download.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(download.size()));
    const std::size_t half = read_response_until(
        [&](char *buffer, std::size_t size) { return ::recv(fd, buffer, size, 0); }, kBytes / 2);
    ASSERT_EQ(half, kBytes / 2);
    ::shutdown(fd, SHUT_RD);
    EXPECT_TRUE(test::eventually([&] { return world_->proxy().counts().tunnels == 0; }, 20s))
        << "the tunnel to a client that stopped reading is still open";
    ::close(fd);
  }
  for (int i = 0; i < 3; ++i) {
    TunnelTls tls(connect_to_proxy_socket(world_->socket()), "github.com",
                  world_->proxy_ca().string(), {});
    ASSERT_TRUE(tls.connected);
    const std::string request = "GET /big?bytes=" + std::to_string(kBytes) +
                                "&pause=0.3 HTTP/1.1\r\nHost: github.com\r\n\r\n";
    ASSERT_GT(SSL_write(tls.ssl, request.data(), static_cast<int>(request.size())), 0);
    const std::size_t half = read_response_until(
        [&](char *buffer, std::size_t size) {
          return static_cast<ssize_t>(SSL_read(tls.ssl, buffer, static_cast<int>(size)));
        },
        kBytes / 2);
    ASSERT_EQ(half, kBytes / 2);
    ::shutdown(tls.fd, SHUT_RD);
    EXPECT_TRUE(test::eventually([&] { return world_->proxy().counts().sessions == 0; }, 20s))
        << "the session of a client that stopped reading is still open";
  }
  const auto result = world_->curl({"http://plain.test/headers"});
  EXPECT_EQ(result.code, 0) << result.err;
}

TEST_F(EgressProxyTest, HttpTwoInsideTheTunnelIsRefused) {
  world_->start_proxy();
  const std::vector<unsigned char> h2_only{2, 'h', '2'};
  TunnelTls offered_h2(world_->port(), "api.github.com", world_->proxy_ca().string(), h2_only);
  EXPECT_FALSE(offered_h2.connected);
  TunnelTls no_alpn(world_->port(), "api.github.com", world_->proxy_ca().string(), {});
  ASSERT_TRUE(no_alpn.connected);
  const std::string answer = no_alpn.exchange("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
  EXPECT_TRUE(contains(answer, "505")) << answer;
  EXPECT_FALSE(contains(answer, kTestToken));
  // Offered beside http/1.1, HTTP/2 is simply not chosen.
  const auto both = world_->curl(
      {"--cacert", world_->proxy_ca().string(), "--http2", "https://api.github.com/headers"});
  EXPECT_EQ(both.code, 0) << both.err;
  EXPECT_TRUE(contains(both.out, kTestToken)) << both.out;
}

TEST_F(EgressProxyTest, H2cUpgradeIsRefused) {
  world_->start_proxy();
  const auto result =
      world_->curl({"-i", "-H", "Upgrade: h2c", "-H", "Connection: Upgrade", "--cacert",
                    world_->proxy_ca().string(), "https://api.github.com/headers"});
  EXPECT_TRUE(contains(result.out, "501")) << result.out;
  EXPECT_FALSE(contains(result.out, kTestToken));
}

TEST_F(EgressProxyTest, ARedirectToAnotherHostDoesNotCarryTheToken) {
  world_->start_proxy();
  // curl takes one --cacert: both CAs in one file.
  const auto both = world_->dir() / "both-cas.pem";
  {
    std::ofstream out(both);
    out << std::ifstream(world_->proxy_ca()).rdbuf()
        << std::ifstream(world_->upstream_ca()).rdbuf();
  }
  for (const std::string to : {"http://plain.test/headers", "https://plain.test/headers"}) {
    const auto result =
        world_->curl({"-L", "--cacert", both.string(), "https://api.github.com/redirect?to=" + to});
    ASSERT_EQ(result.code, 0) << to << ": " << result.err;
    EXPECT_TRUE(contains(result.out, R"("path": "/headers")")) << result.out;
    EXPECT_FALSE(contains(result.out, "Authorization")) << to << ": " << result.out;
  }
}

TEST_F(EgressProxyTest, GitClonesThroughTheInjectedHeaderAlone) {
  world_->start_proxy();
  const auto target = world_->dir() / "clone";
  std::vector<std::string> git{"/usr/bin/git",
                               "-c",
                               "http.proxy=" + world_->proxy_url(),
                               "-c",
                               "http.sslCAInfo=" + world_->proxy_ca().string(),
                               "-c",
                               "credential.helper=",
                               "clone",
                               "-q",
                               "https://github.com/git/repo.git",
                               target.string()};
  ProcessOptions options;
  options.env = std::vector<std::string>{"PATH=/usr/bin:/bin", "HOME=" + world_->dir().string(),
                                         "GIT_TERMINAL_PROMPT=0"};
  const auto result = run_process(git, options);
  ASSERT_EQ(result.code, 0) << result.err;
  std::ifstream readme(target / "README");
  std::string line;
  std::getline(readme, line);
  EXPECT_EQ(line, "served through the egress proxy");

  // Without the token the same clone fails: the header is what lets it in.
  world_->stop_proxy();
  world_->start_proxy([](egress::EgressOptions &options) { options.token->set(""); });
  git[2] = "http.proxy=" + world_->proxy_url();
  git.back() = (world_->dir() / "clone-without").string();
  const auto refused = run_process(git, options);
  EXPECT_NE(refused.code, 0);
  // git met the upstream's 401 and, with prompts off, gives up asking for a username.
  EXPECT_TRUE(contains(refused.err, "could not read Username")) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(world_->dir() / "clone-without" / "README"));
}

TEST_F(EgressProxyTest, BodiesAreReframedBothWays) {
  world_->start_proxy();
  const auto file = world_->dir() / "body";
  std::string body;
  for (int i = 0; i < 20000; ++i) body += "line " + std::to_string(i) + "\n";
  std::ofstream(file) << body;
  const auto chunked = world_->curl({"-H", "Transfer-Encoding: chunked", "--data-binary",
                                     "@" + file.string(), "http://plain.test/echo"});
  ASSERT_EQ(chunked.code, 0) << chunked.err;
  EXPECT_EQ(chunked.out, body);
  const auto injected = world_->curl({"--cacert", world_->proxy_ca().string(), "--data-binary",
                                      "@" + file.string(), "https://api.github.com/echo"});
  ASSERT_EQ(injected.code, 0) << injected.err;
  EXPECT_EQ(injected.out, body);
  const auto chunks =
      world_->curl({"--cacert", world_->proxy_ca().string(), "https://api.github.com/chunked?n=5"});
  EXPECT_EQ(chunks.out, "chunk 0\nchunk 1\nchunk 2\nchunk 3\nchunk 4\n");
}

TEST_F(EgressProxyTest, ASmuggledRequestIsRefused) {
  world_->start_proxy();
  const int fd = connect_to_proxy(world_->port());
  ASSERT_GE(fd, 0);
  const std::string request =
      "POST http://plain.test/echo HTTP/1.1\r\nHost: plain.test\r\nContent-Length: 4\r\n"
      "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
  ::send(fd, request.data(), request.size(), 0);
  const std::string answer = read_until(fd, "\n\n");
  ::close(fd);
  EXPECT_TRUE(contains(answer, "400 Bad Request")) << answer;
}

TEST_F(EgressProxyTest, AConnectionFromAnotherUserIsRefused) {
  world_->start_proxy();
  const auto result = world_->curl({"http://plain.test/headers"}, as_nobody());
  EXPECT_NE(result.code, 0);
  EXPECT_FALSE(contains(result.out, "plain.test"));
  EXPECT_TRUE(world_->said_containing("uid 65534")) << world_->said().size();
}

TEST_F(EgressProxyTest, ASlowClientHoldsNobodyUpAndIsClosedAtTheHeadTimeout) {
  world_->start_proxy([](egress::EgressOptions &options) { options.head_timeout = 2s; });
  // A crowd of clients that never finish their heads...
  std::vector<int> slow;
  for (int i = 0; i < 50; ++i) {
    const int fd = connect_to_proxy(world_->port());
    ASSERT_GE(fd, 0);
    ::send(fd, "GET http://plain.test/ HTTP/1.1\r\n", 33, 0);
    slow.push_back(fd);
  }
  // ... while another is served at once.
  const auto served = world_->curl({"http://plain.test/headers"});
  EXPECT_EQ(served.code, 0) << served.err;
  // The served one's session ends just after its answer (the slow ones never were sessions):
  // well before the slow ones' head timeout.
  EXPECT_TRUE(test::eventually([&] { return world_->proxy().counts().sessions == 0; },
                               std::chrono::milliseconds(500)))
      << world_->proxy().counts().sessions << " sessions";
  for (int fd : slow) {
    const std::string answer = read_until(fd, "\n\n");
    EXPECT_TRUE(contains(answer, "408")) << answer;
    ::close(fd);
  }
  EXPECT_TRUE(world_->said_containing("sent no complete request within 2 s"));
}

TEST_F(EgressProxyTest, AStopUnderAConnectionStormEndsEverySessionAtOnce) {
  // Sessions that would block until the idle timeout, five minutes, unless the stop shuts
  // their sockets down: each sent a request whose body never comes.
  world_->start_proxy();
  std::vector<int> blocked;
  for (int i = 0; i < 20; ++i) {
    const int fd = connect_to_proxy(world_->port());
    ASSERT_GE(fd, 0);
    const std::string head =
        "POST http://plain.test/post HTTP/1.1\r\nHost: plain.test\r\nContent-Length: 100000\r\n"
        "\r\npartial";
    ASSERT_EQ(::send(fd, head.data(), head.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(head.size()));
    blocked.push_back(fd);
  }
  ASSERT_TRUE(test::eventually([&] { return world_->proxy().counts().sessions >= 20; }));
  // Meanwhile connections come and go as fast as they can, each a whole request whose
  // client leaves before the answer: descriptor numbers are closed and handed out again
  // while the stop runs.
  const std::uint16_t port = world_->port();
  std::atomic<bool> storming{true};
  std::atomic<int> storm_connections{0};
  std::vector<std::jthread> storm;
  for (int t = 0; t < 4; ++t) {
    storm.emplace_back([&] {
      const std::string request =
          "GET http://plain.test/headers HTTP/1.1\r\nHost: plain.test\r\n\r\n";
      for (int i = 0; i < 5000 && storming; ++i) {
        const int fd = connect_to_proxy(port);
        if (fd < 0) continue;
        ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
        ::close(fd);
        ++storm_connections;
      }
    });
  }
  ASSERT_TRUE(test::eventually([&] { return storm_connections > 200; }));
  const auto started = std::chrono::steady_clock::now();
  world_->stop_proxy();
  const auto took = std::chrono::steady_clock::now() - started;
  storming = false;
  storm.clear();
  // Well inside the idle timeout: the stop waited for no session's timeout.
  EXPECT_LT(took, 10s) << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                       << " ms to stop";
  for (int fd : blocked) {
    char byte;
    EXPECT_LE(::recv(fd, &byte, 1, 0), 0) << "a blocked session's client still open";
    ::close(fd);
  }
}

TEST_F(EgressProxyTest, ASessionThatFailsAnsweringLeavesNoSocketForTheStopToShutDown) {
  // The upstream answers garbage after the client is gone (reset, so the proxy's error
  // answer fails too): the session ends by an exception. The proxy runs in this process,
  // so the descriptors it closed are the next ones this test opens; a stop that still held
  // a closed one's number would shut down whatever got it.
  world_->start_proxy();
  const int client = connect_to_proxy(world_->port());
  ASSERT_GE(client, 0);
  const std::string request =
      "GET http://plain.test/malformed?delay=0.5 HTTP/1.1\r\nHost: plain.test\r\n\r\n";
  ASSERT_EQ(::send(client, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  ASSERT_TRUE(test::eventually([&] { return world_->proxy().counts().sessions == 1; }));
  const linger reset{1, 0};
  ::setsockopt(client, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  ::close(client);
  ASSERT_TRUE(test::eventually([&] { return world_->proxy().counts().sessions == 0; }, 10s));

  std::vector<std::pair<int, int>> pairs(16);
  for (auto &[ours, peer] : pairs) {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    ours = fds[0];
    peer = fds[1];
  }
  world_->stop_proxy();
  for (const auto &[ours, peer] : pairs) {
    char byte;
    EXPECT_EQ(::recv(peer, &byte, 1, MSG_DONTWAIT), -1)
        << "the stop shut down descriptor " << ours << ", which the proxy had closed";
    ::close(ours);
    ::close(peer);
  }
}

TEST_F(EgressProxyTest, AnIdleTunnelIsClosed) {
  world_->start_proxy([](egress::EgressOptions &options) { options.idle_timeout = 1s; });
  const int fd = connect_to_proxy(world_->port());
  ASSERT_GE(fd, 0);
  const std::string connect = "CONNECT plain.test:443 HTTP/1.1\r\nHost: plain.test:443\r\n\r\n";
  ::send(fd, connect.data(), connect.size(), 0);
  ASSERT_TRUE(contains(read_until(fd, "\r\n\r\n"), " 200 "));
  for (int attempt = 0; attempt < 100 && world_->proxy().counts().tunnels != 1; ++attempt) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(world_->proxy().counts().tunnels, 1u);
  // Nothing moves either way: the proxy ends it (the read below sees its end, within the
  // test's 10 s receive limit).
  char byte;
  EXPECT_EQ(::recv(fd, &byte, 1, 0), 0);
  ::close(fd);
  EXPECT_EQ(world_->proxy().counts().tunnels, 0u);
  EXPECT_TRUE(world_->said_containing("idle for"));
}

TEST_F(EgressProxyTest, AnIdleTerminatedSessionIsClosedEitherSideSilent) {
  world_->start_proxy([](egress::EgressOptions &options) { options.idle_timeout = 1s; });
  auto ends_within_10s = [](SSL *ssl) {
    char byte;
    const auto started = std::chrono::steady_clock::now();
    const int n = SSL_read(ssl, &byte, 1);
    return n <= 0 && std::chrono::steady_clock::now() - started < 10s;
  };
  {
    // A client that sends nothing after its handshake.
    TunnelTls tls(world_->port(), "github.com", world_->proxy_ca().string(), {});
    ASSERT_TRUE(tls.connected);
    EXPECT_TRUE(ends_within_10s(tls.ssl)) << "the proxy kept a silent client's session";
    EXPECT_TRUE(test::eventually([&] { return world_->proxy().counts().sessions == 0; }));
    EXPECT_TRUE(world_->said_containing("the client sent nothing while the proxy waited"));
  }
  {
    // An upstream that pauses in its answer for longer than the idle bound.
    TunnelTls tls(world_->port(), "github.com", world_->proxy_ca().string(), {});
    ASSERT_TRUE(tls.connected);
    const std::string request = "GET /big?bytes=65536&pause=3 HTTP/1.1\r\nHost: github.com\r\n\r\n";
    ASSERT_GT(SSL_write(tls.ssl, request.data(), static_cast<int>(request.size())), 0);
    const std::size_t body = read_response_until(
        [&](char *buffer, std::size_t size) {
          return static_cast<ssize_t>(SSL_read(tls.ssl, buffer, static_cast<int>(size)));
        },
        65536);
    EXPECT_EQ(body, 32768U) << "the first half is all the upstream sent before its pause";
    EXPECT_TRUE(test::eventually([&] { return world_->proxy().counts().sessions == 0; }, 10s));
    EXPECT_TRUE(world_->said_containing("the upstream sent nothing while the proxy waited"));
  }
}

TEST_F(EgressProxyTest, TheTunnelCapRefusesOneMore) {
  world_->start_proxy([](egress::EgressOptions &options) { options.max_tunnels = 1; });
  const int held = connect_to_proxy(world_->port());
  const std::string connect = "CONNECT plain.test:443 HTTP/1.1\r\nHost: plain.test:443\r\n\r\n";
  ::send(held, connect.data(), connect.size(), 0);
  ASSERT_TRUE(contains(read_until(held, "\r\n\r\n"), " 200 "));
  for (int attempt = 0; attempt < 100 && world_->proxy().counts().tunnels != 1; ++attempt) {
    std::this_thread::sleep_for(10ms);
  }
  const auto refused = world_->curl(
      {"-v", "--cacert", world_->upstream_ca().string(), "https://plain.test/headers"});
  EXPECT_NE(refused.code, 0);
  EXPECT_TRUE(contains(refused.err, "503")) << refused.err;
  ::close(held);
}

TEST_F(EgressProxyTest, AnUpstreamCertificateTheRootsDoNotVouchForIsRefused) {
  // The proxy's roots are its own CA here, which did not sign the stand-in's certificate.
  world_->start_proxy([&](egress::EgressOptions &options) {
    options.upstream_ca_bundle = "/etc/ssl/certs/ca-certificates.crt";
  });
  const auto result = world_->curl(
      {"-i", "--cacert", world_->proxy_ca().string(), "https://api.github.com/headers"});
  EXPECT_TRUE(contains(result.out, "502")) << result.out;
  EXPECT_TRUE(contains(result.out, "not trusted")) << result.out;
  EXPECT_FALSE(contains(result.out, kTestToken));
}

TEST_F(EgressProxyTest, TheTokenAppearsInNoLineTheProxySays) {
  world_->start_proxy();
  world_->curl({"--cacert", world_->proxy_ca().string(), "https://api.github.com/headers"});
  world_->curl({"-i", "--cacert", world_->proxy_ca().string(), "-H", "Host: github.com",
                "https://api.github.com/headers"});
  world_->curl({"http://denied.test/"});
  world_->curl({"--cacert", world_->proxy_ca().string(), "https://api.github.com/redirect?to=x"});
  ASSERT_FALSE(world_->said().empty());
  for (const auto &line : world_->said()) EXPECT_FALSE(contains(line, kTestToken)) << line;
}

TEST_F(EgressProxyTest, BulkDataThroughATunnelArrivesWhole) {
  world_->start_proxy();
  const auto result =
      world_->curl({"--cacert", world_->upstream_ca().string(), "-o", "/dev/null", "-w",
                    "%{size_download}", "https://plain.test/big?bytes=67108864"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "67108864");
  // Both ends closed: the tunnel goes.
  for (int attempt = 0; attempt < 100 && world_->proxy().counts().tunnels != 0; ++attempt) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(world_->proxy().counts().tunnels, 0u);
}

}  // namespace
}  // namespace sandbox_host::test
