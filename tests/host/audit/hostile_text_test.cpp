// A hostile client's bytes in what `sandbox-host serve` and `sandbox-host egress` write on
// their stderr, the default audit sink: an op name or a host name made to erase the
// operator's line, move the cursor and write forged text there arrives as escapes, and the
// record stays one line. As root and as nobody, the way an operator runs them.
#include "fixtures.hpp"
#include "process.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace sandbox_host::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines of text that contain needle.
std::vector<std::string> lines_with(const std::string &text, const std::string &needle) {
  std::vector<std::string> found;
  for (const auto &line : lines_of(text)) {
    if (line.find(needle) != std::string::npos) found.push_back(line);
  }
  return found;
}

// The first byte of text that a terminal could act on: a control other than the lines' \n,
// or any byte of a multi-byte character (none of what these tests send is shown as such).
std::optional<std::size_t> first_unsafe_byte(const std::string &text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c >= 0x7f) return i;
  }
  return std::nullopt;
}

class HostileText : public ::testing::TestWithParam<unsigned> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "runs the host as root and as nobody";
    state_ = dir_.dir() / "state";
    fs::create_directories(state_);
    if (::chown(state_.c_str(), GetParam(), GetParam()) != 0) FAIL() << "chown " << state_;
  }

  std::vector<std::string> as_user() const {
    return GetParam() == 0 ? std::vector<std::string>{} : as_nobody();
  }

  // sandbox-host <command> --config <config>, as the test user, with the config written.
  std::unique_ptr<RunningProcess> start(const std::string &command, const std::string &config) {
    std::ofstream(dir_.path()) << config;
    std::vector<std::string> argv = as_user();
    argv.insert(argv.end(), {install_.sandbox_host(), command, "--config", dir_.path().string()});
    return std::make_unique<RunningProcess>(argv);
  }

  // Ends the command as the operator does and gives what it wrote on stderr.
  static std::string stop(RunningProcess &process) {
    ::kill(process.pid(), SIGTERM);
    const ProcessResult ended = process.wait(10s);
    EXPECT_EQ(ended.code, 0) << ended.err;
    return ended.err;
  }

  UnprivilegedInstall install_;
  TempFile dir_{"", "config.toml"};
  fs::path state_;
};

TEST_P(HostileText, AnOpNameReachesTheBrokersAuditAsEscapesOnOneLine) {
  auto serve =
      start("serve", "module_dirs = [\"" + (install_.dir() / SANDBOX_HOST_MODULE_SUBDIR).string() +
                         "\"]\n[ops]\nenabled = [\"ping\"]\n[broker]\nstate_dir = \"" +
                         state_.string() + "\"\n");
  const auto ask = [&](const std::string &op) {
    std::vector<std::string> argv = as_user();
    argv.insert(argv.end(), {install_.sandbox_host(), "ask", op, "--timeout", "1000", "--spool",
                             (state_ / "spool").string()});
    return run_process(argv);
  };
  ASSERT_TRUE(eventually([&] { return ask("ping").out == "pong"; }, 10s)) << "serve never answered";

  const ProcessResult refused = ask("ping\033[2K\033[1Gforged");
  EXPECT_EQ(refused.code, 126) << refused.err;
  EXPECT_EQ(ask("ping").out, "pong");  // and the broker keeps serving
  const std::string err = stop(*serve);

  EXPECT_EQ(err.find('\033'), std::string::npos) << "a raw ESC on stderr";
  const auto records = lines_with(err, "forged");
  ASSERT_FALSE(records.empty()) << err;
  for (const auto &record : records) {
    EXPECT_EQ(record.rfind("sandbox-host: refused: broker ", 0), 0u) << record;
    EXPECT_NE(record.find("op \"ping\\x1b[2K\\x1b[1Gforged\""), std::string::npos) << record;
    EXPECT_TRUE(record.ends_with("(hint: see docs/broker.md for what the broker answers)"))
        << record;
  }
}

// What a terminal would take for an 8-bit CSI, a UTF-8 CSI and a right-to-left override,
// in a SOCKS5 domain, which the proxy takes as bytes (an HTTP request's host may hold no
// such byte: its parser refuses the request first).
const std::string kHostileHost =
    "ev\x9b"
    "2K\xc2\x9b"
    "1G\xe2\x80\xae"
    "forged.test";
const std::string kShownHost = "ev\\x9b2K\\u009b1G\\u202eforged.test:443";

// A connection to the proxy's unix socket, once it listens (bounded).
UniqueFd connect_to(const fs::path &socket) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
  for (int attempt = 0; attempt < 400; ++attempt) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (::connect(fd.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address) == 0) {
      return fd;
    }
    std::this_thread::sleep_for(25ms);
  }
  ADD_FAILURE() << "the proxy never listened on " << socket;
  return UniqueFd();
}

void send_all(int fd, const std::string &bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()));
}

// What the proxy answers until it closes the connection (bounded by the socket's timeout).
std::string read_to_end(int fd) {
  const timeval bound{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
  std::string reply;
  char chunk[4096];
  for (ssize_t n; (n = ::recv(fd, chunk, sizeof chunk, 0)) > 0;) {
    reply.append(chunk, static_cast<std::size_t>(n));
  }
  return reply;
}

TEST_P(HostileText, AHostNameReachesTheProxysAuditAsEscapesOnOneLine) {
  const fs::path socket = state_ / "egress.sock";
  // same_user off: the test's own process is the client, whoever runs the proxy.
  auto egress = start("egress", "[egress]\nlisten = \"\"\nsocket = \"" + socket.string() +
                                    "\"\nallow = [\"plain.test\"]\nsame_user = false\n");
  {
    UniqueFd socks = connect_to(socket);
    ASSERT_TRUE(socks);
    send_all(socks.get(), std::string("\x05\x01\x00", 3));
    char method[2] = {};
    ASSERT_EQ(::recv(socks.get(), method, 2, MSG_WAITALL), 2);
    send_all(socks.get(), std::string("\x05\x01\x00\x03", 4) +
                              static_cast<char>(kHostileHost.size()) + kHostileHost +
                              std::string("\x01\xbb", 2));
    const std::string reply = read_to_end(socks.get());
    ASSERT_GE(reply.size(), 2u);
    EXPECT_NE(reply[1], '\0') << "the SOCKS5 request was granted";
  }
  const std::string err = stop(*egress);

  const auto unsafe = first_unsafe_byte(err);
  EXPECT_FALSE(unsafe.has_value())
      << "byte " << static_cast<int>(static_cast<unsigned char>(err[*unsafe])) << " at " << *unsafe
      << " of: " << err;
  const auto records = lines_with(err, "forged.test");
  EXPECT_FALSE(records.empty()) << err;
  for (const auto &record : records) {
    EXPECT_EQ(record.rfind("sandbox-host: refused: egress rule=egress: ", 0), 0u) << record;
    EXPECT_NE(record.find("-> " + kShownHost + ": refused"), std::string::npos) << record;
  }
}

INSTANTIATE_TEST_SUITE_P(AsRootAndAsNobody, HostileText, ::testing::Values(0u, kNobody),
                         [](const auto &info) { return info.param == 0 ? "root" : "nobody"; });

}  // namespace
}  // namespace sandbox_host::test
