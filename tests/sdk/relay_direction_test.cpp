// One way of a relayed connection (relay_direction.hpp), on real socket pairs: a prefix
// goes first, small and bulk data arrive byte for byte, an end of sending is passed on as
// a half-close only once everything before it was delivered, a budget bounds one move, and
// a broken side throws naming it.
#include <sandbox_host/relay_direction.hpp>

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <random>
#include <string>
#include <thread>

namespace sandbox_host {
namespace {

// A connected pair of non-blocking stream sockets: {ours, the peer's}.
std::pair<UniqueFd, UniqueFd> socket_pair() {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends) != 0) {
    throw std::system_error(errno, std::generic_category(), "socketpair");
  }
  return {UniqueFd(ends[0]), UniqueFd(ends[1])};
}

// Everything readable from fd until the peer's end of sending, moving direction meanwhile.
std::string drain(int fd, RelayDirection &direction, RelayScratch &scratch) {
  std::string got;
  char buffer[65536];
  for (int idle = 0; idle < 2000;) {
    const bool moved = direction.move(scratch, "test");
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n == 0) return got;
    if (n > 0) {
      got.append(buffer, static_cast<std::size_t>(n));
      idle = 0;
    } else if (!moved) {
      pollfd p{fd, POLLIN, 0};
      ::poll(&p, 1, 1);
      ++idle;
    }
  }
  ADD_FAILURE() << "no end of sending after " << got.size() << " bytes";
  return got;
}

TEST(RelayDirection, APrefixGoesFirstAndAnEndOfSendingIsPassedOnAfterTheBytes) {
  auto [from_ours, from_peer] = socket_pair();
  auto [to_ours, to_peer] = socket_pair();
  RelayScratch scratch(0);
  RelayDirection direction(from_ours.get(), to_ours.get(), "already read|");
  ASSERT_EQ(::send(from_peer.get(), "hello", 5, 0), 5);
  ::shutdown(from_peer.get(), SHUT_WR);
  EXPECT_FALSE(direction.done());
  EXPECT_EQ(drain(to_peer.get(), direction, scratch), "already read|hello");
  EXPECT_TRUE(direction.done());
  EXPECT_FALSE(direction.wants_read());
  EXPECT_FALSE(direction.wants_write());
}

TEST(RelayDirection, BulkDataArrivesByteForByteThroughAGrownPipe) {
  auto [from_ours, from_peer] = socket_pair();
  auto [to_ours, to_peer] = socket_pair();
  RelayScratch scratch(1);
  RelayDirection direction(from_ours.get(), to_ours.get());
  std::string sent(8 << 20, '\0');
  std::mt19937 random(7);
  for (char &c : sent) c = static_cast<char>(random());
  std::thread writer([&, fd = from_peer.get()] {
    std::size_t done = 0;
    while (done < sent.size()) {
      const ssize_t n = ::send(fd, sent.data() + done, sent.size() - done, MSG_NOSIGNAL);
      if (n > 0) done += static_cast<std::size_t>(n);
      if (n < 0 && errno == EAGAIN) {
        pollfd p{fd, POLLOUT, 0};
        ::poll(&p, 1, 100);
      } else if (n < 0) {
        return;
      }
    }
    ::shutdown(fd, SHUT_WR);
  });
  const std::string got = drain(to_peer.get(), direction, scratch);
  writer.join();
  EXPECT_EQ(got.size(), sent.size());
  EXPECT_TRUE(got == sent) << "the bytes differ";
  // The one pipe it could grow was taken, and given back on release.
  EXPECT_EQ(scratch.large_pipes_left, 0u);
  direction.release(scratch);
  EXPECT_EQ(scratch.large_pipes_left, 1u);
}

TEST(RelayDirection, ABudgetBoundsOneMove) {
  auto [from_ours, from_peer] = socket_pair();
  auto [to_ours, to_peer] = socket_pair();
  RelayScratch scratch(0);
  RelayDirection direction(from_ours.get(), to_ours.get());
  const std::string chunk(4096, 'x');
  for (int i = 0; i < 8; ++i)
    ASSERT_EQ(::send(from_peer.get(), chunk.data(), chunk.size(), 0), 4096);
  ASSERT_TRUE(direction.move(scratch, "test", 1));
  char buffer[65536];
  const ssize_t first = ::recv(to_peer.get(), buffer, sizeof buffer, MSG_DONTWAIT);
  EXPECT_GT(first, 0);
  EXPECT_LT(first, 8 * 4096) << "one bounded move relayed everything";
  EXPECT_TRUE(direction.wants_read());
}

TEST(RelayDirection, ABrokenSideThrowsNamingIt) {
  auto [from_ours, from_peer] = socket_pair();
  auto [to_ours, to_peer] = socket_pair();
  RelayScratch scratch(0);
  RelayDirection direction(from_ours.get(), to_ours.get());
  to_peer.reset();  // nobody reads what is sent to `to`
  ASSERT_EQ(::send(from_peer.get(), "x", 1, 0), 1);
  try {
    direction.move(scratch, "the upstream's side");
    ADD_FAILURE() << "a send to a closed peer did not throw";
  } catch (const std::system_error &e) {
    EXPECT_EQ(e.code().value(), EPIPE);
    EXPECT_NE(std::string(e.what()).find("the upstream's side"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sandbox_host
