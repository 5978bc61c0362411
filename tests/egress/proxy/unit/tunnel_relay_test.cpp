// The tunnel relay (tunnel_relay.hpp) between two socket pairs standing for the client's and
// the upstream's connections: the bytes read before the tunnel go first, small messages
// cross both ways, a large stream written in pieces of every size reaches a reader that
// starts late intact and in order (the copy path's partial writes and the change to
// splice), an end of stream crosses each way, a closed tunnel leaves the count, and no more
// than 16 bulk pipes are grown at once, the budget coming back as tunnels close.
#include <sandbox_host/egress/proxy/tunnel_relay.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fixtures.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>

namespace sandbox_host::egress {
namespace {

using namespace std::chrono_literals;
using test::eventually;

struct Ends {
  UniqueFd outside;  // the test's end: the client or the upstream server
  UniqueFd relayed;  // the end the relay holds
};

Ends socket_pair() {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  Ends ends{UniqueFd(fds[0]), UniqueFd(fds[1])};
  // The relay takes non-blocking sockets, as the proxy gives it.
  EXPECT_EQ(::fcntl(ends.relayed.get(), F_SETFL, O_NONBLOCK), 0);
  return ends;
}

// Reads exactly `size` bytes or what came before the end or 10 s without a byte.
std::string read_bytes(int fd, std::size_t size) {
  std::string out;
  char buffer[65536];
  while (out.size() < size) {
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, 10000) != 1) break;
    const ssize_t n = ::read(fd, buffer, std::min(sizeof buffer, size - out.size()));
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    ASSERT_GT(n, 0) << std::strerror(errno);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

bool reaches_end(int fd) {
  pollfd ready{fd, POLLIN, 0};
  if (::poll(&ready, 1, 10000) != 1) return false;
  char byte;
  return ::read(fd, &byte, 1) == 0;
}

class TunnelRelayTest : public ::testing::Test {
 protected:
  void open_tunnel(std::string to_upstream = {}) {
    Ends client_ends = socket_pair(), upstream_ends = socket_pair();
    client = std::move(client_ends.outside);
    upstream = std::move(upstream_ends.outside);
    relay.add(std::move(client_ends.relayed), std::move(upstream_ends.relayed),
              std::move(to_upstream), "test");
  }
  std::vector<std::string> said;
  TunnelRelay relay{TunnelLimits{}, [this](const std::string &line) { said.push_back(line); }};
  UniqueFd client, upstream;
};

TEST_F(TunnelRelayTest, BytesReadBeforeTheTunnelGoFirstThenMessagesCrossBothWays) {
  open_tunnel("early ");
  write_all(client.get(), "GET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(read_bytes(upstream.get(), 24), "early GET / HTTP/1.1\r\n\r\n");
  write_all(upstream.get(), "HTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_EQ(read_bytes(client.get(), 27), "HTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_EQ(relay.active(), 1U);
}

// Writes `stream` to `fd` in pieces of 1 to `largest` bytes, pausing `pause` after each.
void write_in_pieces(int fd, const std::string &stream, std::size_t largest,
                     std::chrono::microseconds pause) {
  std::mt19937 random(11);
  std::uniform_int_distribution<std::size_t> size(1, largest);
  for (std::size_t at = 0; at < stream.size();) {
    const std::size_t n = std::min(size(random), stream.size() - at);
    write_all(fd, std::string_view(stream).substr(at, n));
    at += n;
    if (pause.count() > 0) std::this_thread::sleep_for(pause);
  }
}

std::string random_bytes(std::size_t size) {
  std::mt19937 random(7);
  std::string bytes(size, '\0');
  for (char &c : bytes) c = static_cast<char>(random());
  return bytes;
}

TEST_F(TunnelRelayTest, SmallPiecesToAReaderThatStartsLateArriveIntactAndInOrder) {
  open_tunnel();
  // Pieces of at most 2 KiB with a pause after each: the relay copies them one read at a
  // time, and since the client reads nothing at first, the copies' writes to it come back
  // short once its socket is full and must keep the rest until there is room.
  const std::string stream = random_bytes(1 << 20);
  std::thread writer([&] { write_in_pieces(upstream.get(), stream, 2048, 20us); });
  std::this_thread::sleep_for(300ms);
  const std::string received = read_bytes(client.get(), stream.size());
  writer.join();
  ASSERT_EQ(received.size(), stream.size());
  EXPECT_TRUE(received == stream) << "the stream arrived changed or out of order";
}

TEST_F(TunnelRelayTest, AStreamOfEveryWriteSizeReachesALateReaderIntactAndInOrder) {
  open_tunnel();
  // 8 MiB in writes from 1 byte to 256 KiB, so some reads are copied and some fill the
  // buffer and move the direction to splice.
  const std::string stream = random_bytes(8 << 20);
  std::thread writer([&] { write_in_pieces(upstream.get(), stream, 256 << 10, 0us); });
  std::this_thread::sleep_for(200ms);
  const std::string received = read_bytes(client.get(), stream.size());
  writer.join();
  ASSERT_EQ(received.size(), stream.size());
  EXPECT_TRUE(received == stream) << "the stream arrived changed or out of order";
}

TEST_F(TunnelRelayTest, EachSidesEndCrossesAndTheClosedTunnelLeavesTheCount) {
  open_tunnel();
  ASSERT_EQ(::shutdown(client.get(), SHUT_WR), 0);
  EXPECT_TRUE(reaches_end(upstream.get())) << "the client's end did not reach the upstream";
  write_all(upstream.get(), "last words");
  EXPECT_EQ(read_bytes(client.get(), 10), "last words") << "half-closed tunnel stopped";
  upstream.reset();
  EXPECT_TRUE(reaches_end(client.get()));
  EXPECT_TRUE(eventually([&] { return relay.active() == 0; }));
  EXPECT_TRUE(said.empty()) << said.front();
}

TEST_F(TunnelRelayTest, BytesAndTheEndThatFollowsThemAtOnceBothCross) {
  // The relay stops reading a socket at a read that did not fill its buffer, unless the
  // event said the peer hung up: an end that came with the last bytes raises no later
  // event, so it must be seen in the same wake-up. Here the end follows the bytes
  // before the relay holds the sockets, or right after.
  std::vector<UniqueFd> clients;
  for (int i = 0; i < 100; ++i) {
    Ends client_ends = socket_pair(), upstream_ends = socket_pair();
    const bool before = i % 2 == 0;
    auto say_last_words = [&] {
      write_all(upstream_ends.outside.get(), "last words");
      upstream_ends.outside.reset();
    };
    if (before) say_last_words();
    relay.add(std::move(client_ends.relayed), std::move(upstream_ends.relayed), {}, "test");
    if (!before) say_last_words();
    EXPECT_EQ(read_bytes(client_ends.outside.get(), 10), "last words") << "tunnel " << i;
    EXPECT_TRUE(reaches_end(client_ends.outside.get()))
        << "tunnel " << i << ": the upstream's end did not reach the client";
    clients.push_back(std::move(client_ends.outside));
  }
  EXPECT_EQ(relay.active(), 100U) << "a half-closed tunnel ended before its client did";
  clients.clear();
  EXPECT_TRUE(eventually([&] { return relay.active() == 0; }));
}

// The sizes of this process's pipes that are 1 MiB: the relay runs in the test's process.
std::size_t grown_pipes() {
  std::size_t grown = 0;
  for (const auto &entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(entry.path(), ec);
    if (ec || target.string().rfind("pipe:", 0) != 0) continue;
    const int fd = std::stoi(entry.path().filename().string());
    if (::fcntl(fd, F_GETPIPE_SZ) == 1 << 20) ++grown;
  }
  return grown / 2;  // both ends of each
}

TEST(TunnelRelayPipes, AtMostSixteenBulkPipesAreGrownAtOnceAndClosingGivesTheBudgetBack) {
  TunnelRelay relay{TunnelLimits{}, nullptr};
  struct Open {
    UniqueFd client, upstream;
  };
  auto open_bulk_tunnel = [&] {
    Ends client_ends = socket_pair(), upstream_ends = socket_pair();
    Open open{std::move(client_ends.outside), std::move(upstream_ends.outside)};
    relay.add(std::move(client_ends.relayed), std::move(upstream_ends.relayed), {}, "bulk");
    // More than the copy buffer in one go, and a client that reads nothing: the direction
    // goes to a pipe, which stays while its bytes wait.
    const std::string bulk(256 << 10, 'x');
    ::send(open.upstream.get(), bulk.data(), bulk.size(), MSG_DONTWAIT);
    return open;
  };
  std::vector<Open> tunnels;
  for (int i = 0; i < 20; ++i) tunnels.push_back(open_bulk_tunnel());
  EXPECT_TRUE(eventually([] { return grown_pipes() == 16; }))
      << grown_pipes() << " grown pipes with 20 bulk tunnels open; the budget is 16";
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(grown_pipes(), 16U);
  tunnels.clear();
  ASSERT_TRUE(eventually([&] { return relay.active() == 0; }));
  EXPECT_EQ(grown_pipes(), 0U);
  const Open again = open_bulk_tunnel();
  EXPECT_TRUE(eventually([] { return grown_pipes() == 1; }))
      << "a bulk tunnel after the others closed got no grown pipe: the budget did not return";
}

}  // namespace
}  // namespace sandbox_host::egress
