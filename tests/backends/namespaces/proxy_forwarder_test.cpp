// The relay of network proxied (backends/namespaces/proxy_forwarder.cpp), from the
// backend's own source, on the host's loopback: a child process relays an ephemeral port
// to a stand-in proxy's unix socket, as the sandbox's init does with its port inside.
#include "proxy_forwarder.hpp"
#include "fixtures.hpp"
#include "stand_in_proxy.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace sandbox_host::namespaces {
namespace {

using namespace std::chrono_literals;
using test::read_to_end;
using test::send_all;
using test::StandInProxy;

// relay_forever() in a child process of its own, killed at the end.
class RelayProcess {
 public:
  explicit RelayProcess(const std::string &socket_path) {
    UniqueFd listener = listen_on_loopback(0);
    sockaddr_in address{};
    socklen_t size = sizeof address;
    ::getsockname(listener.get(), reinterpret_cast<sockaddr *>(&address), &size);
    port_ = ntohs(address.sin_port);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::signal(SIGPIPE, SIG_IGN);  // as the sandbox's init has it
      try {
        relay_forever(std::move(listener), socket_path);
      } catch (const std::exception &e) {
        std::fprintf(stderr, "relay: %s\n", e.what());
      }
      ::_exit(1);
    }
  }
  ~RelayProcess() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  RelayProcess(const RelayProcess &) = delete;
  RelayProcess &operator=(const RelayProcess &) = delete;

  std::uint16_t port() const noexcept { return port_; }
  bool running() const { return ::waitpid(pid_, nullptr, WNOHANG) == 0; }

 private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
};

// A client of the relay, its reads and writes bounded in time.
UniqueFd connect_to(std::uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (::connect(fd.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
    ADD_FAILURE() << "connect 127.0.0.1:" << port << ": " << std::strerror(errno);
    return {};
  }
  const timeval timeout{10, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  return fd;
}

// Answers "<n>\n" with "<2n>\n" and closes.
void doubler(int fd) {
  std::string line;
  char c;
  while (::recv(fd, &c, 1, 0) == 1 && c != '\n') line.push_back(c);
  send_all(fd, std::to_string(2 * std::strtol(line.c_str(), nullptr, 10)) + "\n");
}

// One exchange with the doubler through the relay.
std::string ask_doubler(std::uint16_t port, int n) {
  UniqueFd client = connect_to(port);
  if (!client || !send_all(client.get(), std::to_string(n) + "\n")) return "<send failed>";
  return read_to_end(client.get());
}

class ProxyRelay : public ::testing::Test {
 protected:
  // Before any thread of the test exists: the relay is forked.
  void SetUp() override { relay_.emplace(socket_path()); }
  void TearDown() override { relay_.reset(); }

  std::string socket_path() const { return (dir_.dir() / "egress.sock").string(); }
  std::uint16_t port() const { return relay_->port(); }

  test::TempFile dir_{"", "unused"};
  std::optional<RelayProcess> relay_;
};

TEST_F(ProxyRelay, RelaysBothWaysAndPassesTheClientsEndOfSendingOn) {
  // Echoes as it reads; only the client's end of sending, passed on, lets it answer "END".
  StandInProxy proxy(socket_path(), [](int fd) {
    std::string chunk(65536, '\0');
    size_t total = 0;
    for (;;) {
      const ssize_t n = ::recv(fd, chunk.data(), chunk.size(), 0);
      if (n < 0) return;  // timed out: the end of the client's sending never came
      if (n == 0) break;
      total += static_cast<size_t>(n);
      if (!send_all(fd, std::string_view(chunk.data(), static_cast<size_t>(n)))) return;
    }
    send_all(fd, "END " + std::to_string(total) + "\n");
  });
  std::string data(8 << 20, '\0');
  std::mt19937 random(42);
  for (char &c : data) c = static_cast<char>(random());

  UniqueFd client = connect_to(port());
  ASSERT_TRUE(client);
  // Written from another thread: the echo comes back while the rest is still being sent.
  std::thread writer([&] {
    EXPECT_TRUE(send_all(client.get(), data));
    ::shutdown(client.get(), SHUT_WR);
  });
  const std::string back = read_to_end(client.get());
  writer.join();
  ASSERT_EQ(back.size(), data.size() + std::string("END 8388608\n").size());
  EXPECT_TRUE(back.substr(0, data.size()) == data) << "the echo differs from what was sent";
  EXPECT_EQ(back.substr(data.size()), "END 8388608\n");
}

TEST_F(ProxyRelay, TheProxyMayEndItsSendingFirst) {
  std::promise<std::string> heard;
  StandInProxy proxy(socket_path(), [&heard](int fd) {
    send_all(fd, "greeting\n");
    ::shutdown(fd, SHUT_WR);
    heard.set_value(read_to_end(fd));
  });
  UniqueFd client = connect_to(port());
  ASSERT_TRUE(client);
  // The end of the proxy's sending reaches the client while the client still sends.
  EXPECT_EQ(read_to_end(client.get()), "greeting\n");
  ASSERT_TRUE(send_all(client.get(), "late words"));
  ::shutdown(client.get(), SHUT_WR);
  auto said = heard.get_future();
  ASSERT_EQ(said.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(said.get(), "late words");
  // And then the connection ends on the client's side too.
  char c;
  EXPECT_EQ(::recv(client.get(), &c, 1, 0), 0);
}

TEST_F(ProxyRelay, ManyConnectionsOneAfterAnotherAndAtOnce) {
  StandInProxy proxy(socket_path(), doubler);
  constexpr int kConnections = 200;
  for (int i = 0; i < kConnections; ++i)
    ASSERT_EQ(ask_doubler(port(), i), std::to_string(2 * i) + "\n");

  std::vector<std::string> answers(kConnections);
  std::vector<std::thread> clients;
  for (int i = 0; i < kConnections; ++i) {
    clients.emplace_back([&, i] { answers[i] = ask_doubler(port(), i); });
  }
  for (auto &client : clients) client.join();
  for (int i = 0; i < kConnections; ++i) EXPECT_EQ(answers[i], std::to_string(2 * i) + "\n") << i;
  EXPECT_TRUE(relay_->running());
}

TEST_F(ProxyRelay, AClientThatResetsLeavesTheOthersAlone) {
  StandInProxy proxy(socket_path(), doubler);
  UniqueFd rude = connect_to(port());
  ASSERT_TRUE(rude);
  ASSERT_TRUE(send_all(rude.get(), "12"));  // no newline: the doubler waits for more
  const linger abort{1, 0};
  ::setsockopt(rude.get(), SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
  rude.reset();
  EXPECT_EQ(ask_doubler(port(), 21), "42\n");
  EXPECT_TRUE(relay_->running());
}

// What a client of the relay gets when the proxy does not take its connection.
int error_after_connect(std::uint16_t port) {
  UniqueFd client = connect_to(port);
  if (!client) return -1;
  char c;
  const ssize_t n = ::recv(client.get(), &c, 1, 0);
  return n < 0 ? errno : 0;
}

TEST_F(ProxyRelay, AClientIsResetWhenTheProxyIsNotThere) {
  // No socket at all, then a socket nobody listens on.
  EXPECT_EQ(error_after_connect(port()), ECONNRESET);
  UniqueFd unbound(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path().c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(::bind(unbound.get(), reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
  EXPECT_EQ(error_after_connect(port()), ECONNRESET);
  EXPECT_TRUE(relay_->running());
}

TEST_F(ProxyRelay, ClientsWaitWhileTheProxysQueueIsFull) {
  // A queue of one, and nobody accepting yet: most clients find it full.
  StandInProxy proxy(socket_path(), doubler, 1, false);
  constexpr int kClients = 8;
  std::vector<std::string> answers(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] { answers[i] = ask_doubler(port(), i); });
  }
  std::this_thread::sleep_for(300ms);
  proxy.accept_now();
  for (auto &client : clients) client.join();
  for (int i = 0; i < kClients; ++i) EXPECT_EQ(answers[i], std::to_string(2 * i) + "\n") << i;
}

}  // namespace
}  // namespace sandbox_host::namespaces
