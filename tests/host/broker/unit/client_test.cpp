// The client (client.hpp) where no broker answers: a missing spool, a spool no broker
// serves, a served spool nobody takes requests from, and sockets missing, refusing, silent
// or closed; and the frames of a stand-in broker socket collected into an answer.
#include <sandbox_host/host/broker/client.hpp>
#include <sandbox_host/host/broker/protocol.hpp>

#include <sandbox_host/host/broker/spool.hpp>
#include "wire.hpp"

#include <fixtures.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace sandbox_host::broker {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kPrefix = "no sandbox-host broker answered: ";

// The message ask (or ask_socket) fails with, "(answered)" or "(refused: ...)".
std::string no_broker(const std::function<void()> &asking) {
  try {
    asking();
  } catch (const NoBroker &e) {
    return e.what();
  } catch (const Refused &e) {
    return std::string("(refused: ") + e.what() + ")";
  }
  return "(answered)";
}

std::vector<std::string> entries(const fs::path &dir) {
  std::vector<std::string> names;
  for (const auto &entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

const Request kPing = op_only("ping");

// ---- ask over a spool ------------------------------------------------------------------------

TEST(Ask, AMissingSpoolIsNoBrokerNamingIt) {
  test::TempFile marker("x");
  const fs::path spool = marker.dir() / "no-such-spool";
  EXPECT_EQ(no_broker([&] { ask(spool, kPing); }),
            kPrefix + "cannot open spool " + spool.string() + ": No such file or directory");
  EXPECT_EQ(no_broker([&] { ask(marker.path(), kPing); }),
            kPrefix + "cannot open spool " + marker.path().string() + ": Not a directory");
}

TEST(Ask, ASpoolWithoutABrokerLockIsNoBrokerNamingIt) {
  test::TempFile marker("x");
  const fs::path spool = marker.dir() / "spool";
  fs::create_directory(spool);
  EXPECT_EQ(no_broker([&] { ask(spool, kPing); }), kPrefix + "no broker serves " + spool.string());
  // A lock file left by a broker that is gone holds no lock.
  std::ofstream(spool / kBrokerLockFile) << "";
  EXPECT_EQ(no_broker([&] { ask(spool, kPing); }), kPrefix + "no broker serves " + spool.string());
  EXPECT_EQ(entries(spool), std::vector<std::string>{kBrokerLockFile});
}

TEST(Ask, AServedSpoolNobodyAnswersIsNoBrokerAfterTheTimeoutAndLeftClean) {
  test::TempFile marker("x");
  const fs::path spool = marker.dir() / "spool";
  Spool served(spool, true);  // holds the broker lock, but takes no request
  AskOptions options;
  options.timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(no_broker([&] { ask(spool, kPing, options); }),
            kPrefix + "no broker took the request within 300 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(entries(spool), std::vector<std::string>{kBrokerLockFile});
}

// ---- ask over a socket -----------------------------------------------------------------------

TEST(AskSocket, AMissingSocketIsNoBrokerNamingIt) {
  test::TempFile marker("x");
  const fs::path socket = marker.dir() / "broker.sock";
  EXPECT_EQ(no_broker([&] { ask_socket(socket, kPing); }),
            kPrefix + "cannot connect to " + socket.string() + ": No such file or directory");
}

TEST(AskSocket, ASocketPathTooLongIsNoBroker) {
  const fs::path socket = "/tmp/" + std::string(200, 's');
  EXPECT_EQ(no_broker([&] { ask_socket(socket, kPing); }),
            kPrefix + "socket path " + socket.string() + " is too long");
}

// A SOCK_SEQPACKET socket at <dir>/broker.sock.
class Listener {
 public:
  explicit Listener(const fs::path &path) : path_(path) {
    fd_.reset(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    if (!fd_ || ::bind(fd_.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
        ::listen(fd_.get(), 4) != 0) {
      throw std::system_error(errno, std::generic_category(), "listen on " + path.string());
    }
  }
  int fd() const { return fd_.get(); }
  void close() { fd_.reset(); }

  // Accepts one client on a thread, reads its request, then runs serve(connection).
  void serve_one(std::function<void(int, const std::string &)> serve) {
    thread_ = std::thread([this, serve = std::move(serve)] {
      pollfd ready{fd_.get(), POLLIN, 0};
      if (::poll(&ready, 1, 10000) != 1) return;
      const UniqueFd connection(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!connection) return;
      std::string request(65536, '\0');
      pollfd readable{connection.get(), POLLIN, 0};
      if (::poll(&readable, 1, 10000) != 1) return;
      const ssize_t n = ::recv(connection.get(), request.data(), request.size(), 0);
      request.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
      serve(connection.get(), request);
    });
  }
  ~Listener() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  fs::path path_;
  UniqueFd fd_;
  std::thread thread_;
};

void send_frame(int fd, const std::string &frame) {
  (void)::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL);
}

// Waits (bounded) until the client hangs up.
void until_hung_up(int fd) {
  pollfd ready{fd, POLLIN, 0};
  char byte;
  for (int i = 0; i < 100; ++i) {
    if (::poll(&ready, 1, 100) == 1 && ::recv(fd, &byte, 1, MSG_DONTWAIT) <= 0) return;
  }
}

TEST(AskSocket, ASocketNobodyListensOnIsNoBroker) {
  test::TempFile marker("x");
  const fs::path socket = marker.dir() / "broker.sock";
  {
    Listener listener(socket);
    listener.close();  // the file stays, the listener is gone
  }
  ASSERT_TRUE(fs::is_socket(socket));
  EXPECT_EQ(no_broker([&] { ask_socket(socket, kPing); }),
            kPrefix + "cannot connect to " + socket.string() + ": Connection refused");
}

TEST(AskSocket, ASilentBrokerIsNoBrokerAfterTheTimeout) {
  test::TempFile marker("x");
  const fs::path socket = marker.dir() / "broker.sock";
  Listener listener(socket);
  listener.serve_one([](int connection, const std::string &) { until_hung_up(connection); });
  AskOptions options;
  options.timeout = 300ms;
  EXPECT_EQ(no_broker([&] { ask_socket(socket, kPing, options); }),
            kPrefix + "no answer from " + socket.string() + " within 300 ms");
}

TEST(AskSocket, ABrokerThatClosesWithoutAnsweringIsNoBroker) {
  test::TempFile marker("x");
  const fs::path socket = marker.dir() / "broker.sock";
  Listener listener(socket);
  listener.serve_one([](int, const std::string &) {});
  EXPECT_EQ(no_broker([&] { ask_socket(socket, kPing); }),
            kPrefix + "the broker closed " + socket.string() + " without answering");
}

TEST(AskSocket, AMalformedFrameIsNoBroker) {
  test::TempFile marker("x");
  const fs::path socket = marker.dir() / "broker.sock";
  Listener listener(socket);
  listener.serve_one([](int connection, const std::string &) { send_frame(connection, "[]"); });
  EXPECT_EQ(no_broker([&] { ask_socket(socket, kPing); }),
            kPrefix +
                "the broker sent a malformed reply: reply frame must be a JSON object, not "
                "an array");
}

TEST(AskSocket, CollectsTheFramesOfAnAnswer) {
  test::TempFile marker("x");
  const fs::path socket = marker.dir() / "broker.sock";
  Listener listener(socket);
  std::string received;
  listener.serve_one([&](int connection, const std::string &request) {
    received = request;
    send_frame(connection, encode_frame(ReplyFrame{}));
    send_frame(connection, encode_frame(frame("one ")));
    send_frame(connection, encode_frame(frame("", "warn")));
    send_frame(connection, encode_frame(frame("two", "", "", 3, true)));
  });
  Request request = op_only("echo");
  request.args = {"a", "\xc3\xa9"};
  request.input = std::string("\0\xff", 2);
  const Answer answer = ask_socket(socket, request);
  EXPECT_EQ(answer.out, "one two");
  EXPECT_EQ(answer.err, "warn");
  EXPECT_EQ(answer.code, 3);
  const Request parsed = parse_request(received, 1 << 20);
  EXPECT_EQ(parsed.op, "echo");
  EXPECT_EQ(parsed.args, request.args);
  EXPECT_EQ(parsed.input, request.input);
}

TEST(AskSocket, StreamsOutputToOnOutputAndThrowsRefused) {
  test::TempFile marker("x");
  const fs::path socket = marker.dir() / "broker.sock";
  Listener listener(socket);
  listener.serve_one([](int connection, const std::string &) {
    send_frame(connection, encode_frame(frame("partial")));
    send_frame(connection, encode_frame(frame("", "e", "op refused", 2, true)));
  });
  std::vector<std::pair<std::string, bool>> streamed;
  AskOptions options;
  options.on_output = [&](std::string_view bytes, bool is_err) {
    streamed.emplace_back(std::string(bytes), is_err);
  };
  try {
    ask_socket(socket, kPing, options);
    ADD_FAILURE() << "not refused";
  } catch (const Refused &e) {
    EXPECT_STREQ(e.what(), "op refused");
    EXPECT_EQ(e.code, 2);
    EXPECT_EQ(e.out, "");  // streamed, not collected
  }
  EXPECT_EQ(streamed, (std::vector<std::pair<std::string, bool>>{{"partial", false}, {"e", true}}));
}

}  // namespace
}  // namespace sandbox_host::broker
