// The egress proxy's same-user check (same_user) against real peers: the owner the kernel
// reports is believed only while the peer's socket is open and connected, so a client that
// closes before the proxy asks (its socket then a minisocket that reports uid 0) is refused,
// and honest clients of the proxy's user keep working.
#include "fixtures.hpp"

#include <sandbox_host/egress/proxy/peer_identity.hpp>
#include <sandbox_host/egress/proxy/proxy_server.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <arpa/inet.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace sandbox_host::test {
namespace {

using namespace std::chrono_literals;

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// The stand-in internet's one server, on a loopback address of its own: it answers every
// request "200 ok" and counts the connections the proxy made to it.
class CountingUpstream {
 public:
  static constexpr const char *kAddress = "127.0.0.9";

  CountingUpstream() {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    ::inet_pton(AF_INET, kAddress, &address.sin_addr);
    socklen_t length = sizeof address;
    if (!listener_ ||
        ::bind(listener_.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
        ::listen(listener_.get(), 64) != 0 ||
        ::getsockname(listener_.get(), reinterpret_cast<sockaddr *>(&address), &length) != 0) {
      throw std::runtime_error(std::string("the upstream cannot listen on ") + kAddress + ": " +
                               std::strerror(errno));
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::jthread([this](std::stop_token stop) { serve(stop); });
  }

  std::uint16_t port() const { return port_; }
  std::size_t connections() const { return connections_; }

 private:
  void serve(std::stop_token stop) {
    while (!stop.stop_requested()) {
      pollfd ready{listener_.get(), POLLIN, 0};
      if (::poll(&ready, 1, 50) <= 0) continue;
      UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!client) continue;
      ++connections_;
      timeval limit{10, 0};
      ::setsockopt(client.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
      std::string head;
      char chunk[4096];
      while (!contains(head, "\r\n\r\n")) {
        const ssize_t n = ::recv(client.get(), chunk, sizeof chunk, 0);
        if (n <= 0) break;
        head.append(chunk, static_cast<std::size_t>(n));
      }
      const std::string answer =
          "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
      ::send(client.get(), answer.data(), answer.size(), MSG_NOSIGNAL);
    }
  }

  UniqueFd listener_{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  std::uint16_t port_ = 0;
  std::atomic<std::size_t> connections_{0};
  std::jthread thread_;
};

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// A connected TCP socket to 127.0.0.1:port, or an invalid one.
UniqueFd connect_to(std::uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const sockaddr_in address = loopback(port);
  if (!fd || ::connect(fd.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0)
    return UniqueFd();
  timeval limit{10, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  return fd;
}

bool send_all(int fd, const std::string &bytes) {
  return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

std::string read_to_end(int fd) {
  std::string text;
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return text;
    text.append(chunk, static_cast<std::size_t>(n));
  }
}

// The exit code of `body` run in a forked child as nobody:nogroup with no supplementary
// groups. The child makes only system calls: the parent has threads (the proxy's).
int as_nobody(const std::function<int()> &body) {
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0)
      ::_exit(90);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class SameUserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    upstream_ = std::make_unique<CountingUpstream>();
    egress::EgressOptions options;
    options.listen = egress::LoopbackEndpoint::parse("127.0.0.1:0");
    const std::string target =
        std::string(CountingUpstream::kAddress) + ":" + std::to_string(upstream_->port());
    options.allow = egress::HostAllowList::parse({target});
    options.addresses = egress::AddressPolicy::parse({CountingUpstream::kAddress});
    options.same_user = ::geteuid();
    options.say = [this](const std::string &line) {
      std::lock_guard lock(said_mutex_);
      said_.push_back(line);
    };
    proxy_ = std::make_unique<egress::EgressProxy>(std::move(options));
    request_ = "GET http://" + target + "/ HTTP/1.1\r\nHost: " + target + "\r\n";
  }

  // A request of `bytes` bytes or more: a padding header fills it up.
  std::string request(std::size_t bytes = 0) const {
    std::string head = request_;
    if (head.size() + 16 < bytes)
      head += "X-Pad: " + std::string(bytes - head.size() - 16, 'p') + "\r\n";
    return head + "\r\n";
  }

  std::vector<std::string> said() {
    std::lock_guard lock(said_mutex_);
    return said_;
  }
  std::size_t said_containing(const std::string &part) {
    std::size_t count = 0;
    for (const auto &line : said()) count += contains(line, part) ? 1 : 0;
    return count;
  }
  std::string said_text() {
    std::string text;
    for (const auto &line : said()) text += line + "\n";
    return text;
  }

  std::unique_ptr<CountingUpstream> upstream_;
  std::unique_ptr<egress::EgressProxy> proxy_;
  std::string request_;
  std::mutex said_mutex_;
  std::vector<std::string> said_;
};

// The reproduction of the finding: another user's request and FIN in one segment (TCP_CORK,
// then close at once). By the time the proxy asks, the client's socket is a FIN_WAIT2
// minisocket, which the kernel reports as uid 0 with no inode; a proxy running as root
// took that for its own user and forwarded every one.
TEST_F(SameUserTest, AnotherUsersRequestThatClosesAtOnceIsRefusedAsClosed) {
  if (::geteuid() != 0) GTEST_SKIP() << "another user's client needs root to become nobody";
  constexpr int kAttempts = 20;
  const std::string corked = request(1000);
  const std::uint16_t port = proxy_->port();
  const int code = as_nobody([&] {
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      const sockaddr_in address = loopback(port);
      const int one = 1;
      if (!fd ||
          ::connect(fd.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0 ||
          ::setsockopt(fd.get(), IPPROTO_TCP, TCP_CORK, &one, sizeof one) != 0 ||
          !send_all(fd.get(), corked)) {
        return 1;
      }
    }
    return 0;
  });
  ASSERT_EQ(code, 0) << "the client could not send its requests";
  // Every attempt ends one way or the other: refused, or forwarded to the upstream.
  EXPECT_TRUE(eventually(
      [&] { return said_containing("refused") + upstream_->connections() >= kAttempts; }, 10s))
      << said_text();
  EXPECT_EQ(upstream_->connections(), 0U) << said_text();
  EXPECT_EQ(said_containing("refused: the connection's owner is unknown: the peer's socket was "
                            "already closed"),
            static_cast<std::size_t>(kAttempts))
      << said_text();
}

TEST_F(SameUserTest, AnotherUsersOpenConnectionIsRefusedWithItsUid) {
  if (::geteuid() != 0) GTEST_SKIP() << "another user's client needs root to become nobody";
  const std::string plain = request();
  const std::uint16_t port = proxy_->port();
  const int code = as_nobody([&] {
    UniqueFd fd = connect_to(port);
    if (!fd || !send_all(fd.get(), plain)) return 1;
    // The proxy closes without an answer.
    return read_to_end(fd.get()).empty() ? 0 : 2;
  });
  EXPECT_EQ(code, 0);
  EXPECT_EQ(upstream_->connections(), 0U);
  EXPECT_EQ(said_containing("refused: the connection belongs to uid 65534"), 1U) << said_text();
}

TEST_F(SameUserTest, TheProxysOwnUserIsServed) {
  UniqueFd fd = connect_to(proxy_->port());
  ASSERT_TRUE(fd);
  ASSERT_TRUE(send_all(fd.get(), request(1000)));
  const std::string answer = read_to_end(fd.get());
  EXPECT_TRUE(contains(answer, "200 OK")) << answer << said_text();
  EXPECT_EQ(upstream_->connections(), 1U);
}

// A client that ends its sending after the request (shutdown(SHUT_WR), as `nc -N` and some
// one-shot HTTP/1.0 clients do) still holds its socket open, so its owner is still known.
TEST_F(SameUserTest, TheOwnUsersHalfClosedClientIsServed) {
  UniqueFd fd = connect_to(proxy_->port());
  ASSERT_TRUE(fd);
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_CORK, &one, sizeof one);
  ASSERT_TRUE(send_all(fd.get(), request(1000)));
  ASSERT_EQ(::shutdown(fd.get(), SHUT_WR), 0);
  const std::string answer = read_to_end(fd.get());
  EXPECT_TRUE(contains(answer, "200 OK")) << answer << said_text();
  EXPECT_EQ(upstream_->connections(), 1U);
}

// A connection on loopback: the client's socket and the accepted one.
struct Connection {
  UniqueFd client, accepted;
};

// Listens on `address` (port 0), connects a socket of `client_family` to `target` (the
// listener's address, or another spelling of it) and accepts. `before_connect` may set
// options on the client's socket.
Connection connect_over(const std::string &address, int client_family, const std::string &target,
                        const std::function<void(int)> &before_connect = {}) {
  const bool six = address.find(':') != std::string::npos;
  UniqueFd listener(::socket(six ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_storage bound{};
  socklen_t length = six ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (six) {
    auto &in6 = reinterpret_cast<sockaddr_in6 &>(bound);
    in6.sin6_family = AF_INET6;
    ::inet_pton(AF_INET6, address.c_str(), &in6.sin6_addr);
  } else {
    auto &in = reinterpret_cast<sockaddr_in &>(bound);
    in.sin_family = AF_INET;
    ::inet_pton(AF_INET, address.c_str(), &in.sin_addr);
  }
  if (::bind(listener.get(), reinterpret_cast<sockaddr *>(&bound), length) != 0 ||
      ::listen(listener.get(), 4) != 0 ||
      ::getsockname(listener.get(), reinterpret_cast<sockaddr *>(&bound), &length) != 0) {
    throw std::runtime_error("cannot listen on " + address + ": " + std::strerror(errno));
  }
  const in_port_t port = six ? reinterpret_cast<sockaddr_in6 &>(bound).sin6_port
                             : reinterpret_cast<sockaddr_in &>(bound).sin_port;
  Connection connection;
  connection.client.reset(::socket(client_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (before_connect) before_connect(connection.client.get());
  sockaddr_storage peer{};
  if (client_family == AF_INET6) {
    auto &in6 = reinterpret_cast<sockaddr_in6 &>(peer);
    in6.sin6_family = AF_INET6;
    in6.sin6_port = port;
    ::inet_pton(AF_INET6, target.c_str(), &in6.sin6_addr);
  } else {
    auto &in = reinterpret_cast<sockaddr_in &>(peer);
    in.sin_family = AF_INET;
    in.sin_port = port;
    ::inet_pton(AF_INET, target.c_str(), &in.sin_addr);
  }
  if (::connect(connection.client.get(), reinterpret_cast<sockaddr *>(&peer),
                client_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in)) != 0) {
    throw std::runtime_error("cannot connect to " + target + ": " + std::strerror(errno));
  }
  connection.accepted.reset(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!connection.accepted)
    throw std::runtime_error("accept: " + std::string(std::strerror(errno)));
  return connection;
}

TEST(PeerIdentifierTest, AnOpenPeerIsNamedByItsOwnerOverIpv4Ipv6AndV4Mapped) {
  struct Case {
    const char *listen;
    int family;
    const char *target;
  };
  for (const Case &each : {Case{"127.0.0.1", AF_INET, "127.0.0.1"}, Case{"::1", AF_INET6, "::1"},
                           Case{"127.0.0.1", AF_INET6, "::ffff:127.0.0.1"}}) {
    SCOPED_TRACE(each.target);
    const Connection connection = connect_over(each.listen, each.family, each.target);
    egress::PeerIdentifier peers;
    const egress::Peer peer = peers.identify(connection.accepted.get());
    ASSERT_TRUE(peer.uid) << peer.unknown;
    EXPECT_EQ(*peer.uid, ::geteuid());
    EXPECT_EQ(egress::same_user_refusal(peer, ::geteuid()), "");
  }
}

// Whatever state the kernel had reached (FIN_WAIT1, or the FIN_WAIT2 minisocket once the
// FIN was acknowledged), a closed socket is held by no process and reports uid 0.
TEST(PeerIdentifierTest, APeerThatClosedHasNoOwner) {
  Connection connection = connect_over("127.0.0.1", AF_INET, "127.0.0.1");
  connection.client.reset();
  egress::PeerIdentifier peers;
  const egress::Peer peer = peers.identify(connection.accepted.get());
  EXPECT_FALSE(peer.uid) << *peer.uid;
  EXPECT_TRUE(contains(egress::same_user_refusal(peer, ::geteuid()),
                       "the peer's socket was already closed when the proxy asked"))
      << peer.unknown;
}

// When no socket has the peer's address any more, the kernel's exact lookup falls back to
// a listener on that address and port, which is someone else's socket. TCP_REPAIR closes
// the client without a FIN or a reset, so the accepted socket stays ESTABLISHED and the
// moment is held still (for a real client, a reset arriving between accept and lookup).
TEST(PeerIdentifierTest, AListenerWhereAGonePeerWasIsNotThePeer) {
  if (::geteuid() != 0) GTEST_SKIP() << "TCP_REPAIR needs CAP_NET_ADMIN";
  const int one = 1;
  // The client's port is bound before it connects: connect() alone may pick a port that other
  // connections to other destinations share, and the listener could not bind it.
  Connection connection = connect_over("127.0.0.1", AF_INET, "127.0.0.1", [&](int fd) {
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in any_port{};
    any_port.sin_family = AF_INET;
    any_port.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr *>(&any_port), sizeof any_port) != 0) {
      throw std::runtime_error(std::string("cannot bind the client: ") + std::strerror(errno));
    }
  });
  sockaddr_in client{};
  socklen_t length = sizeof client;
  ASSERT_EQ(::getsockname(connection.client.get(), reinterpret_cast<sockaddr *>(&client), &length),
            0);
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr *>(&client), sizeof client), 0)
      << std::strerror(errno);
  ASSERT_EQ(::listen(listener.get(), 1), 0) << std::strerror(errno);
  ASSERT_EQ(::setsockopt(connection.client.get(), IPPROTO_TCP, TCP_REPAIR, &one, sizeof one), 0)
      << std::strerror(errno);
  connection.client.reset();
  egress::PeerIdentifier peers;
  const egress::Peer peer = peers.identify(connection.accepted.get());
  EXPECT_FALSE(peer.uid) << *peer.uid;
  EXPECT_TRUE(contains(peer.unknown, "TCP state LISTEN, not the peer's")) << peer.unknown;
}

}  // namespace
}  // namespace sandbox_host::test
