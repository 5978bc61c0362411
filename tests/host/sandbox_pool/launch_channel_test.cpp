// The launch channel: a prepared sandbox takes exactly one launch (its Spec, environment
// and stdio) and names the reason for anything else it is handed. receive_launch() makes
// the received descriptors the process's 0-2, so every receive that gets that far runs in
// a forked child that reports back; the test process keeps its own stdio.
#include "fixtures.hpp"

#include <sandbox_host/host/launch_channel.hpp>
#include <sandbox_host/host/launch_client/spec_codec.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace sandbox_host {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kTimeout = 10s;

using test::make_pipe;
using test::Pipe;

struct Channel {
  UniqueFd host, sandbox;
};

Channel make_channel() {
  ChannelPair pair = make_launch_channel();
  return {UniqueFd(pair.host), UniqueFd(pair.sandbox)};
}

void write_all(int fd, const std::string &text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Everything fd gives until EOF, or what came before the timeout.
std::string read_all(int fd, std::chrono::milliseconds timeout = kTimeout) {
  std::string text;
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd ready{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&ready, 1, static_cast<int>(left.count())) <= 0) {
      ADD_FAILURE() << "no EOF within the timeout; got so far: " << text;
      return text;
    }
    char buffer[4096];
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return text;
    text.append(buffer, static_cast<size_t>(n));
  }
}

std::set<int> open_descriptors() {
  std::set<int> fds;
  for (const auto &entry : fs::directory_iterator("/proc/self/fd")) {
    fds.insert(std::stoi(entry.path().filename()));
  }
  return fds;
}

// Runs body in a forked child and returns what it returned (or "threw: <what>"). The child
// _exits once it has reported: it never returns into GoogleTest.
std::string in_child(const std::function<std::string()> &body) {
  Pipe report = make_pipe();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) {
    std::string text;
    try {
      text = body();
    } catch (const std::exception &e) {
      text = std::string("threw: ") + e.what();
    }
    write_all(report.write.get(), text);
    ::_exit(0);
  }
  report.write.reset();
  std::string text = read_all(report.read.get());
  int status = 0;
  const auto deadline = Clock::now() + kTimeout;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ADD_FAILURE() << "the receiving child did not exit";
      break;
    }
    ::usleep(10'000);
  }
  return text;
}

// A launch written out field by field, to compare what was sent with what arrived.
std::string describe(const LaunchMessage &message) {
  std::ostringstream out;
  const Spec &spec = message.spec;
  out << "plugin_name " << spec.plugin_name << "\nbinary_path " << spec.binary_path
      << "\nsocket_dir " << spec.socket_dir << "\ntmp_dir " << spec.tmp_dir << "\nnetwork "
      << to_string(spec.network) << "\n";
  for (const auto &path : spec.read_paths) out << "read_path " << path << "\n";
  for (const auto &arg : spec.args) out << "arg [" << arg << "]\n";
  for (const auto &entry : spec.env) out << "env " << entry << "\n";
  return out.str();
}

using test::sample_launch;

// Sends text as one message with the given descriptors, as a host other than
// send_launch() could.
void send_raw(int channel, const std::string &text, const std::vector<int> &fds) {
  iovec data{const_cast<char *>(text.data()), text.size()};
  msghdr header{};
  header.msg_iov = &data;
  header.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
  if (!fds.empty()) {
    header.msg_control = control.data();
    header.msg_controllen = control.size();
    cmsghdr *rights = CMSG_FIRSTHDR(&header);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(rights), fds.data(), sizeof(int) * fds.size());
  }
  ASSERT_EQ(::sendmsg(channel, &header, MSG_NOSIGNAL), static_cast<ssize_t>(text.size()))
      << std::strerror(errno);
}

// The plugin's three pipes as the host has them: the launch gets in.read, out.write and
// err.write; the host keeps the other ends.
struct LaunchPipes {
  Pipe in = make_pipe();
  Pipe out = make_pipe();
  Pipe err = make_pipe();
  Stdio stdio() const { return {in.read.get(), out.write.get(), err.write.get()}; }
  std::vector<int> fds() const { return {in.read.get(), out.write.get(), err.write.get()}; }
  // Once the launch is on its way: it holds the only copies of its ends.
  void sent(const std::string &input) {
    in.read.reset();
    out.write.reset();
    err.write.reset();
    write_all(in.write.get(), input);
    in.write.reset();
  }
};

// In the child: what it read on 0 goes to 1, a marker to 2.
std::string echo_stdio() {
  std::string input;
  char buffer[256];
  for (ssize_t n; (n = ::read(0, buffer, sizeof buffer)) > 0;) input.append(buffer, n);
  write_all(1, "out: " + input);
  write_all(2, "err: " + input);
  std::string flags;
  for (int fd = 0; fd < 3; ++fd) {
    const int fd_flags = ::fcntl(fd, F_GETFD);
    flags += fd_flags < 0 ? "closed " : (fd_flags & FD_CLOEXEC) ? "cloexec " : "inherited ";
  }
  return flags;
}

TEST(LaunchChannel, ReportReadySendsOneByteTheHostCanWaitFor) {
  Channel channel = make_channel();
  report_ready(channel.sandbox.get());
  pollfd ready{channel.host.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&ready, 1, 1000), 1);
  char buffer[8];
  EXPECT_EQ(::recv(channel.host.get(), buffer, sizeof buffer, MSG_DONTWAIT), 1);
  EXPECT_EQ(::recv(channel.host.get(), buffer, sizeof buffer, MSG_DONTWAIT), -1);
}

TEST(LaunchChannel, TheLaunchArrivesWholeWithItsStdioAsZeroToTwo) {
  Channel channel = make_channel();
  const LaunchMessage sent = sample_launch();
  LaunchPipes pipes;
  send_launch(channel.host.get(), sent, pipes.stdio());
  pipes.sent("input line\n");

  const std::string report = in_child([&] {
    const std::set<int> before = open_descriptors();
    const LaunchMessage received = receive_launch(channel.sandbox.get());
    // Nothing else of the message stays open: the received copies went to 0-2.
    const bool same_descriptors = open_descriptors() == before;
    return describe(received) +
           (same_descriptors ? "no other descriptor\n" : "descriptors leaked\n") + echo_stdio();
  });
  EXPECT_EQ(report, describe(sent) + "no other descriptor\ninherited inherited inherited ");
  EXPECT_EQ(read_all(pipes.out.read.get()), "out: input line\n");
  EXPECT_EQ(read_all(pipes.err.read.get()), "err: input line\n");
}

TEST(LaunchChannel, TheStdioArriveRightInAProcessWhoseZeroToTwoWereClosed) {
  Channel channel = make_channel();
  LaunchPipes pipes;
  send_launch(channel.host.get(), sample_launch(), pipes.stdio());
  pipes.sent("closed before\n");

  // The kernel hands the three descriptors out as 0, 1 and 2 here.
  const std::string report = in_child([&] {
    ::close(0);
    ::close(1);
    ::close(2);
    receive_launch(channel.sandbox.get());
    return echo_stdio();
  });
  EXPECT_EQ(report, "inherited inherited inherited ");
  EXPECT_EQ(read_all(pipes.out.read.get()), "out: closed before\n");
  EXPECT_EQ(read_all(pipes.err.read.get()), "err: closed before\n");
}

std::string receive_error(int channel) {
  try {
    receive_launch(channel);
  } catch (const std::runtime_error &e) {
    return e.what();
  }
  return "";
}

TEST(LaunchChannel, AHostThatClosesWithoutALaunchIsNamed) {
  Channel channel = make_channel();
  channel.host.reset();
  EXPECT_EQ(receive_error(channel.sandbox.get()), "the host closed the channel without a launch");
}

TEST(LaunchChannel, ALaunchWithoutThreeDescriptorsIsRefusedAndClosesWhatCame) {
  Channel channel = make_channel();
  const std::string text = encode_launch_message(sample_launch());
  Pipe pipe = make_pipe();
  const std::set<int> before = open_descriptors();

  send_raw(channel.host.get(), text, {pipe.write.get()});
  EXPECT_EQ(receive_error(channel.sandbox.get()),
            "expected stdin, stdout and stderr with the launch, got 1 descriptors");
  EXPECT_EQ(open_descriptors(), before);

  send_raw(channel.host.get(), text, {});
  EXPECT_EQ(receive_error(channel.sandbox.get()),
            "expected stdin, stdout and stderr with the launch, got 0 descriptors");

  // The descriptor that came is closed: the pipe's only writer is the test's own.
  pipe.write.reset();
  EXPECT_EQ(read_all(pipe.read.get()), "");
}

// A launch that cannot be used is reported on the launch's stderr, which is what its
// launcher reads. Returns which exception refused it.
std::string refused_in_child(int channel) {
  try {
    receive_launch(channel);
  } catch (const std::runtime_error &e) {
    write_all(2, std::string(e.what()) + "\n");
    return "refused: runtime_error";
  } catch (const std::exception &e) {
    write_all(2, std::string(e.what()) + "\n");
    return "refused: another exception than the documented runtime_error";
  }
  return "accepted";
}

TEST(LaunchChannel, AMessageOverTheLimitIsRefusedOnTheLaunchsStderr) {
  Channel channel = make_channel();
  LaunchPipes pipes;
  send_raw(channel.host.get(), std::string(kMaxLaunchMessage + 100, 'x'), pipes.fds());
  pipes.sent("");
  EXPECT_EQ(in_child([&] { return refused_in_child(channel.sandbox.get()); }),
            "refused: runtime_error");
  EXPECT_EQ(read_all(pipes.err.read.get()),
            "launch message over " + std::to_string(kMaxLaunchMessage) + " bytes\n");
  EXPECT_EQ(read_all(pipes.out.read.get()), "");
}

TEST(LaunchChannel, AMessageOfExactlyTheLimitIsNotCutShort) {
  Channel channel = make_channel();
  LaunchPipes pipes;
  // Valid JSON up to the last byte, so any cut makes it malformed.
  LaunchMessage message = sample_launch();
  message.spec.args = {""};
  const size_t fixed = encode_launch_message(message).size();
  message.spec.args = {std::string(kMaxLaunchMessage - fixed, 'a')};
  ASSERT_EQ(encode_launch_message(message).size(), kMaxLaunchMessage);
  send_launch(channel.host.get(), message, pipes.stdio());
  pipes.sent("");
  EXPECT_EQ(in_child([&] {
              return std::to_string(receive_launch(channel.sandbox.get()).spec.args.at(0).size());
            }),
            std::to_string(kMaxLaunchMessage - fixed));
}

// Messages a host could send that are no launch, and the line each is refused with.
std::vector<std::pair<std::string, std::string>> malformed_launches() {
  LaunchMessage no_equals = sample_launch();
  no_equals.spec.env.push_back("NOEQUALS");
  LaunchMessage empty_name = sample_launch();
  empty_name.spec.env.push_back("=value");
  return {
      {"{\"plugin_name\":", "spec: not a JSON object: "},
      {"[]", "spec: not a JSON object\n"},
      {encode_launch_message(no_equals), "spec: env entry \"NOEQUALS\" is not NAME=VALUE\n"},
      {encode_launch_message(empty_name), "spec: env entry \"=value\" is not NAME=VALUE\n"},
  };
}

// Which exception receive_launch() refused text with, in a child.
std::string refusal_of(const std::string &text, std::string &stderr_text) {
  Channel channel = make_channel();
  LaunchPipes pipes;
  send_raw(channel.host.get(), text, pipes.fds());
  pipes.sent("");
  const std::string refusal = in_child([&] { return refused_in_child(channel.sandbox.get()); });
  stderr_text = read_all(pipes.err.read.get());
  return refusal;
}

TEST(LaunchChannel, MalformedLaunchesAreRefusedOnTheLaunchsStderr) {
  for (const auto &[text, error] : malformed_launches()) {
    std::string stderr_text;
    EXPECT_NE(refusal_of(text, stderr_text), "accepted") << text;
    EXPECT_EQ(stderr_text.rfind(error, 0), 0u) << text << "\nstderr: " << stderr_text;
  }
}

// launch_channel.hpp: receive_launch() "Throws std::runtime_error with the reason".
TEST(LaunchChannel, MalformedLaunchesThrowTheDocumentedRuntimeError) {
  for (const auto &[text, error] : malformed_launches()) {
    std::string stderr_text;
    EXPECT_EQ(refusal_of(text, stderr_text), "refused: runtime_error") << text;
  }
}

TEST(LaunchChannel, SendingAnOversizedLaunchThrowsLengthErrorAndSendsNothing) {
  Channel channel = make_channel();
  LaunchMessage message = sample_launch();
  message.spec.plugin_name = "big";
  message.spec.args = {std::string(kMaxLaunchMessage, 'a')};
  const size_t size = encode_launch_message(message).size();
  LaunchPipes pipes;
  try {
    send_launch(channel.host.get(), message, pipes.stdio());
    ADD_FAILURE() << "no exception";
  } catch (const std::length_error &e) {
    EXPECT_EQ(std::string(e.what()), "launch for plugin \"big\": " + std::to_string(size) +
                                         " bytes of Spec and environment, over " +
                                         std::to_string(kMaxLaunchMessage));
  }
  pollfd arrived{channel.sandbox.get(), POLLIN, 0};
  EXPECT_EQ(::poll(&arrived, 1, 0), 0);
}

TEST(LaunchChannel, SendingToASandboxThatIsGoneThrowsInsteadOfRaisingSigpipe) {
  Channel channel = make_channel();
  channel.sandbox.reset();
  LaunchPipes pipes;
  try {
    send_launch(channel.host.get(), sample_launch(), pipes.stdio());
    ADD_FAILURE() << "no exception";
  } catch (const std::system_error &e) {
    EXPECT_EQ(e.code().value(), EPIPE);
    EXPECT_EQ(std::string(e.what()).rfind("launch channel: send the launch", 0), 0u) << e.what();
  }
}

TEST(LaunchChannel, TheStatusReportedArrivesAsItWasSent) {
  for (int status : {0, 1, 42, 128 + SIGKILL, 255}) {
    Channel channel = make_channel();
    ASSERT_TRUE(report_status(channel.sandbox.get(), status));
    EXPECT_EQ(receive_status(channel.host.get()), status);
  }
}

TEST(LaunchChannel, NoStatusOnceTheSandboxClosedItsEnd) {
  Channel channel = make_channel();
  channel.sandbox.reset();
  EXPECT_EQ(receive_status(channel.host.get()), std::nullopt);
}

TEST(LaunchChannel, AReportToAHostThatIsGoneFailsWithoutASignal) {
  Channel channel = make_channel();
  channel.host.reset();
  EXPECT_FALSE(report_status(channel.sandbox.get(), 3));
}

TEST(LaunchChannel, AMalformedStatusIsRefusedByName) {
  for (const std::string &bad : {std::string("\x01\x02", 2), std::string(8, '\0')}) {
    Channel channel = make_channel();
    ASSERT_EQ(::send(channel.sandbox.get(), bad.data(), bad.size(), 0),
              static_cast<ssize_t>(bad.size()));
    EXPECT_THROW(
        {
          try {
            receive_status(channel.host.get());
          } catch (const std::runtime_error &e) {
            EXPECT_STREQ(e.what(), "launch channel: a malformed status report");
            throw;
          }
        },
        std::runtime_error);
  }
  for (std::int32_t out_of_range : {-1, 256, 1000}) {
    Channel channel = make_channel();
    ASSERT_EQ(::send(channel.sandbox.get(), &out_of_range, sizeof out_of_range, 0),
              static_cast<ssize_t>(sizeof out_of_range));
    EXPECT_THROW(receive_status(channel.host.get()), std::runtime_error) << out_of_range;
  }
}

}  // namespace
}  // namespace sandbox_host
