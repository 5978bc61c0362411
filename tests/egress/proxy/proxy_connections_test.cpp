// The egress proxy's connections against real clients (curl, openssl) and a stand-in
// internet on loopback: a client that stops reading or is slow costs only its own
// connection, idle tunnels and sessions are closed, the tunnel cap holds, a stop ends every
// session at once, and bulk data arrives whole.
#include "egress_proxy_fixture.hpp"
#include "egress_world.hpp"
#include "fixtures.hpp"

#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace sandbox_host::test {
namespace {

using namespace std::chrono_literals;

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
