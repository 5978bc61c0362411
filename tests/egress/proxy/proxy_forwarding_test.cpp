// The egress proxy against real clients (curl, git, openssl) and a stand-in internet on
// loopback: where the token goes and where it never does. TLS terminated for the inject
// hosts alone, the token added there and carried by no redirect, no log line and no refusal;
// the inner host and server name held to the target, HTTP/2 and h2c refused, bodies
// reframed both ways and a smuggled request refused.
#include "egress_proxy_fixture.hpp"
#include "egress_world.hpp"
#include "fixtures.hpp"

#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace sandbox_host::test {
namespace {

using namespace std::chrono_literals;

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

}  // namespace
}  // namespace sandbox_host::test
