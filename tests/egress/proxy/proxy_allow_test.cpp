// The egress proxy against real clients (curl) and a stand-in internet on loopback: what
// passes by HTTP, CONNECT, SOCKS5 and the unix socket, what the allow list refuses (hosts,
// ports, the apex, loopback in every spelling, a name with a private address, another
// user's connection), and the connection log.
#include "egress_proxy_fixture.hpp"
#include "egress_world.hpp"
#include "fixtures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sandbox_host::test {
namespace {

using namespace std::chrono_literals;

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

TEST_F(EgressProxyTest, AConnectionFromAnotherUserIsRefused) {
  world_->start_proxy();
  const auto result = world_->curl({"http://plain.test/headers"}, as_nobody());
  EXPECT_NE(result.code, 0);
  EXPECT_FALSE(contains(result.out, "plain.test"));
  EXPECT_TRUE(world_->said_containing("uid 65534")) << world_->said().size();
}

}  // namespace
}  // namespace sandbox_host::test
