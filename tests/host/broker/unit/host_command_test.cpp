// Host commands (host_command.hpp) with real commands: output and exit codes, environment,
// working directory, standard input, and every way a command is cut short (timeout, output
// cap, requester gone, woken by wake_fd), each taking the command's descendants with it.
#include <sandbox_host/host/broker/host_command.hpp>
#include <sandbox_host/host/identity/process_identity.hpp>

#include <fixtures.hpp>
#include <process.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace sandbox_host::broker {
namespace {

using test::gone_within;

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const std::vector<std::string> kPath{"PATH=/usr/bin:/bin"};

HostCommand sh(const std::string &script) {
  HostCommand command;
  command.path = "/bin/sh";
  command.args = {"-c", script};
  command.env = kPath;
  return command;
}

struct Outcome {
  CommandResult result;
  std::string out, err;
  Clock::duration took{};
  bool hung = false;  // not done within the test's bound: its processes were killed
};

// Kills every descendant of this process (what a hung command left), so a blocked
// run_host_command returns.
void kill_our_descendants() {
  for (pid_t pid : descendants("/proc", ::getpid())) ::kill(pid, SIGKILL);
}

// run_host_command on another thread, bounded: after limit, its processes are killed and the
// run is marked hung.
Outcome execute(const HostCommand &command, CommandIo io = {}, std::chrono::seconds limit = 30s) {
  auto outcome = std::make_shared<Outcome>();
  io.out = [outcome](std::string_view bytes) { outcome->out.append(bytes); };
  io.err = [outcome](std::string_view bytes) { outcome->err.append(bytes); };
  auto done = std::async(std::launch::async, [outcome, command, io]() mutable {
    const auto start = Clock::now();
    outcome->result = run_host_command(command, io);
    outcome->took = Clock::now() - start;
  });
  if (done.wait_for(limit) != std::future_status::ready) {
    outcome->hung = true;
    for (int i = 0; i < 300 && done.wait_for(100ms) != std::future_status::ready; ++i) {
      kill_our_descendants();
    }
  }
  done.get();
  return std::move(*outcome);
}

pid_t first_line_pid(const std::string &out) {
  try {
    return static_cast<pid_t>(std::stol(out.substr(0, out.find('\n'))));
  } catch (const std::exception &) {
    return -1;
  }
}

// Kills pid at the end of the test, in case the command under test left it running.
struct Reaper {
  ~Reaper() {
    for (pid_t pid : pids) {
      if (pid > 0) ::kill(pid, SIGKILL);
    }
  }
  std::vector<pid_t> pids;
};

std::string seconds(Clock::duration d) {
  return std::to_string(std::chrono::duration<double>(d).count()) + " s";
}

class HostCommandTest : public testing::Test {
 protected:
  // As the broker does: a command that closes its stdin must not end the caller.
  void SetUp() override { ::signal(SIGPIPE, SIG_IGN); }
};

// ---- what a command gets and gives ---------------------------------------------------------

TEST_F(HostCommandTest, HandsOnOutputErrorsAndTheExitCode) {
  const Outcome r = execute(sh("echo out; echo err >&2; printf more; exit 3"));
  EXPECT_FALSE(r.hung);
  EXPECT_EQ(r.out, "out\nmore");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.result.code, 3);
  EXPECT_EQ(r.result.error, "");
  EXPECT_EQ(execute(sh("exit 255")).result.code, 255);
  EXPECT_EQ(execute(sh("true")).result.code, 0);
}

TEST_F(HostCommandTest, AnExitBySignalIs128PlusTheSignal) {
  EXPECT_EQ(execute(sh("kill -TERM $$")).result.code, 128 + SIGTERM);
  EXPECT_EQ(execute(sh("kill -KILL $$")).result.code, 128 + SIGKILL);
  EXPECT_EQ(execute(sh("kill -USR1 $$")).result.code, 128 + SIGUSR1);
}

TEST_F(HostCommandTest, TheEnvironmentIsExactlyWhatWasGiven) {
  HostCommand command;
  command.path = "/usr/bin/env";
  command.env = {"A=1", "B=two words", "EMPTY=", "UTF=\xc3\xa9"};
  const Outcome r = execute(command);
  EXPECT_EQ(r.out, "A=1\nB=two words\nEMPTY=\nUTF=\xc3\xa9\n");
  EXPECT_EQ(r.result.code, 0) << r.err;
  command.env.clear();
  EXPECT_EQ(execute(command).out, "");
}

TEST_F(HostCommandTest, ArgumentsArePassedAsGiven) {
  HostCommand command;
  command.path = "/usr/bin/printf";
  command.args = {"[%s]", "a b", "", "$HOME", "\xc3\xa9", "*"};
  EXPECT_EQ(execute(command).out, "[a b][][$HOME][\xc3\xa9][*]");
}

TEST_F(HostCommandTest, RunsInTheGivenDirectoryOrInRoot) {
  test::TempFile marker("x");
  const std::string dir = fs::canonical(marker.dir()).string();
  HostCommand command = sh("pwd");
  command.cwd = dir;
  EXPECT_EQ(execute(command).out, dir + "\n");
  command.cwd.clear();
  EXPECT_EQ(execute(command).out, "/\n");
}

TEST_F(HostCommandTest, CwdFdComesBeforeTheCwdString) {
  test::TempFile marker("x");
  const std::string dir = fs::canonical(marker.dir()).string();
  const UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  HostCommand command = sh("pwd; ls");
  command.cwd = "/";
  CommandIo io;
  io.cwd_fd = fd.get();
  const Outcome r = execute(command, io);
  EXPECT_EQ(r.out, dir + "\nfile\n");
  EXPECT_EQ(r.result.code, 0) << r.err;
}

TEST_F(HostCommandTest, AMissingDirectoryIsRefused) {
  HostCommand command = sh("pwd");
  command.cwd = "/nonexistent-directory-of-the-test";
  CommandIo io;
  io.out = io.err = [](std::string_view) {};
  EXPECT_THROW(run_host_command(command, io), std::system_error);
}

TEST_F(HostCommandTest, DeliversItsInputOnStdin) {
  std::string input = "hello\0world\n";
  for (int b = 0; b < 256; ++b) input.push_back(static_cast<char>(b));
  HostCommand command;
  command.path = "/bin/cat";
  command.input = input;
  const Outcome r = execute(command);
  EXPECT_EQ(r.out, input);
  EXPECT_EQ(r.result.code, 0) << r.err;
}

TEST_F(HostCommandTest, StdinIsDevNullWithoutInput) {
  const Outcome r = execute(sh("cat; readlink /proc/self/fd/0"));
  EXPECT_FALSE(r.hung);
  EXPECT_EQ(r.out, "/dev/null\n");
  EXPECT_EQ(r.result.code, 0) << r.err;
}

TEST_F(HostCommandTest, ACommandThatDoesNotReadItsInputStillEnds) {
  HostCommand command = sh("exit 4");
  command.input = std::string(4096, 'x');
  const Outcome r = execute(command);
  EXPECT_FALSE(r.hung);
  EXPECT_EQ(r.result.code, 4);
}

// More input than a pipe holds, echoed back: writing it must not block reading the output.
TEST_F(HostCommandTest, InputLargerThanAPipeGoesThroughCat) {
  std::string input;
  for (int i = 0; i < (1 << 20); ++i) input.push_back(static_cast<char>('a' + i % 26));
  HostCommand command;
  command.path = "/bin/cat";
  command.input = input;
  command.timeout = 10s;
  const Outcome r = execute(command, {}, 15s);
  EXPECT_FALSE(r.hung) << "run_host_command was still blocked after 15 s; its command was killed";
  EXPECT_EQ(r.result.error, "");
  EXPECT_EQ(r.out.size(), input.size());
  EXPECT_TRUE(r.out == input);
}

// A command that never reads more input than a pipe holds: the timeout still ends it.
TEST_F(HostCommandTest, TheTimeoutHoldsWhileInputIsPending) {
  HostCommand command;
  command.path = "/bin/sleep";
  command.args = {"12"};
  command.input = std::string(1 << 20, 'x');
  command.timeout = 300ms;
  const Outcome r = execute(command, {}, 30s);
  EXPECT_FALSE(r.hung);
  EXPECT_EQ(r.result.error, "timed out after 300 ms");
  EXPECT_LT(r.took, 6s) << "took " << seconds(r.took) << " (the command sleeps 12 s)";
}

// ---- cut short -------------------------------------------------------------------------------

TEST_F(HostCommandTest, TheTimeoutKillsTheCommandAndItsBackgroundGrandchild) {
  HostCommand command = sh("sleep 100 & echo $!; sleep 100");
  command.timeout = 500ms;
  const Outcome r = execute(command);
  Reaper reaper{{first_line_pid(r.out)}};
  EXPECT_FALSE(r.hung);
  EXPECT_EQ(r.result.error, "timed out after 500 ms");
  EXPECT_EQ(r.result.code, 128 + SIGKILL);
  EXPECT_LT(r.took, 10s) << "took " << seconds(r.took);
  ASSERT_GT(first_line_pid(r.out), 0) << r.out;
  EXPECT_TRUE(gone_within(first_line_pid(r.out), 5s));
}

TEST_F(HostCommandTest, TheTimeoutKillsAGrandchildThatLeftTheSession) {
  HostCommand command = sh("setsid sleep 100 & echo $!; sleep 100");
  command.timeout = 700ms;
  const Outcome r = execute(command);
  Reaper reaper{{first_line_pid(r.out)}};
  EXPECT_EQ(r.result.error, "timed out after 700 ms");
  EXPECT_LT(r.took, 10s) << "took " << seconds(r.took);
  ASSERT_GT(first_line_pid(r.out), 0) << r.out;
  EXPECT_TRUE(gone_within(first_line_pid(r.out), 5s));
}

TEST_F(HostCommandTest, TheOutputCapCutsTheCommand) {
  HostCommand command = sh("sleep 100 & echo $!; head -c 100000 /dev/zero; sleep 100");
  CommandIo io;
  io.max_output = 1000;
  const Outcome r = execute(command, io);
  Reaper reaper{{first_line_pid(r.out)}};
  EXPECT_FALSE(r.hung);
  EXPECT_EQ(r.result.error, "output of more than 1000 bytes (the broker's max_reply_bytes)");
  EXPECT_LE(r.out.size() + r.err.size(), 1000u);
  EXPECT_LT(r.took, 10s) << "took " << seconds(r.took);
  const pid_t background = first_line_pid(r.out);
  if (background > 0) {
    EXPECT_TRUE(gone_within(background, 5s));
  }
}

TEST_F(HostCommandTest, OutputUpToTheCapIsNotCut) {
  HostCommand command = sh("head -c 600 /dev/zero; head -c 400 /dev/zero >&2");
  CommandIo io;
  io.max_output = 1000;
  const Outcome r = execute(command, io);
  EXPECT_EQ(r.result.error, "");
  EXPECT_EQ(r.out.size(), 600u);
  EXPECT_EQ(r.err.size(), 400u);
}

TEST_F(HostCommandTest, ARequesterGoneEndsTheCommandWithItsTree) {
  HostCommand command = sh("sleep 100 & echo $!; sleep 100");
  CommandIo io;
  io.tick = 50ms;
  const auto gone_at = Clock::now() + 400ms;
  std::atomic<int> asked = 0;
  io.requester_gone = [&] {
    ++asked;
    return Clock::now() >= gone_at;
  };
  const Outcome r = execute(command, io);
  Reaper reaper{{first_line_pid(r.out)}};
  EXPECT_FALSE(r.hung);
  EXPECT_EQ(r.result.error, "its requester no longer holds the request");
  EXPECT_GT(asked.load(), 1);
  EXPECT_LT(r.took, 10s) << "took " << seconds(r.took);
  ASSERT_GT(first_line_pid(r.out), 0) << r.out;
  EXPECT_TRUE(gone_within(first_line_pid(r.out), 5s));
}

TEST_F(HostCommandTest, ARequesterThatStaysLetsTheCommandFinish) {
  CommandIo io;
  io.tick = 20ms;
  io.requester_gone = [] { return false; };
  const Outcome r = execute(sh("sleep 0.3; echo done"), io);
  EXPECT_EQ(r.result.error, "");
  EXPECT_EQ(r.out, "done\n");
}

TEST_F(HostCommandTest, AReadyWakeFdEndsTheWaitLongBeforeTheTick) {
  const UniqueFd wake(::eventfd(0, EFD_CLOEXEC));
  ASSERT_TRUE(wake);
  std::atomic<bool> gone = false;
  CommandIo io;
  io.tick = 25s;
  io.wake_fd = wake.get();
  io.wake_events = POLLIN;
  io.requester_gone = [&] { return gone.load(); };
  std::thread waker([&] {
    std::this_thread::sleep_for(300ms);
    gone = true;
    const std::uint64_t one = 1;
    (void)!::write(wake.get(), &one, sizeof one);
  });
  const Outcome r = execute(sh("sleep 100"), io, 60s);
  waker.join();
  EXPECT_FALSE(r.hung);
  EXPECT_EQ(r.result.error, "its requester no longer holds the request");
  EXPECT_LT(r.took, 10s) << "took " << seconds(r.took) << " with a tick of 25 s";
}

TEST_F(HostCommandTest, ADaemonHoldingStdoutDoesNotHoldTheReply) {
  // The daemon reports its pid once it has its own session; the command exits a little later.
  const Outcome r =
      execute(sh("setsid sh -c 'echo $$; exec sleep 100' & sleep 0.5; echo main done"));
  const pid_t daemon = first_line_pid(r.out);
  Reaper reaper{{daemon}};
  EXPECT_FALSE(r.hung);
  EXPECT_EQ(r.result.code, 0);
  EXPECT_EQ(r.result.error, "");
  EXPECT_NE(r.out.find("main done\n"), std::string::npos) << r.out;
  EXPECT_LT(r.took, 5s) << "took " << seconds(r.took);
  ASSERT_GT(daemon, 0) << r.out;
  // It left the session, so it outlived the command: the reply did not wait for it.
  EXPECT_FALSE(gone_within(daemon, 0ms));
}

TEST_F(HostCommandTest, BackgroundProcessesInTheSessionEndWithTheCommand) {
  const Outcome r = execute(sh("sleep 100 >/dev/null 2>&1 & echo $!"));
  const pid_t background = first_line_pid(r.out);
  Reaper reaper{{background}};
  EXPECT_EQ(r.result.code, 0);
  ASSERT_GT(background, 0) << r.out;
  EXPECT_TRUE(gone_within(background, 5s));
}

// ---- refused, and what does not leak in ------------------------------------------------------

TEST_F(HostCommandTest, RefusesAPathThatIsNotAbsolute) {
  CommandIo io;
  io.out = io.err = [](std::string_view) {};
  for (const std::string path : {"", "sh", "bin/sh", "./sh"}) {
    HostCommand command;
    command.path = path;
    try {
      run_host_command(command, io);
      ADD_FAILURE() << "ran \"" << path << "\"";
    } catch (const std::system_error &e) {
      EXPECT_EQ(e.code().value(), EINVAL) << path;
      EXPECT_NE(std::string(e.what()).find("is not an absolute path"), std::string::npos)
          << e.what();
    }
  }
}

TEST_F(HostCommandTest, RefusesAMissingOrNonExecutableFile) {
  CommandIo io;
  io.out = io.err = [](std::string_view) {};
  HostCommand missing;
  missing.path = "/nonexistent/command";
  try {
    run_host_command(missing, io);
    ADD_FAILURE() << "ran a missing command";
  } catch (const std::system_error &e) {
    EXPECT_EQ(e.code().value(), ENOENT) << e.what();
  }
  test::TempFile text("#!/bin/sh\necho ran\n", "script");
  fs::permissions(text.path(), fs::perms::owner_read | fs::perms::owner_write);
  HostCommand not_executable;
  not_executable.path = text.path().string();
  EXPECT_THROW(run_host_command(not_executable, io), std::system_error);
}

TEST_F(HostCommandTest, DescriptorsOfTheCallerDoNotLeakIn) {
  test::TempFile marker("secret", "leaked-marker");
  const int leaked = ::open(marker.path().c_str(), O_RDONLY);  // no O_CLOEXEC, on purpose
  ASSERT_GE(leaked, 0);
  int leaked_pipe[2];
  ASSERT_EQ(::pipe(leaked_pipe), 0);
  HostCommand command;
  command.path = "/bin/ls";
  command.args = {"-l", "/proc/self/fd/"};
  const Outcome r = execute(command);
  ::close(leaked);
  ::close(leaked_pipe[0]);
  ::close(leaked_pipe[1]);
  ASSERT_EQ(r.result.code, 0) << r.err;
  std::map<int, std::string> fds;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const auto arrow = line.find(" -> ");
    if (arrow == std::string::npos) continue;
    const auto space = line.rfind(' ', arrow - 1);
    fds[std::stoi(line.substr(space + 1, arrow - space - 1))] = line.substr(arrow + 4);
  }
  EXPECT_EQ(r.out.find(marker.path().string()), std::string::npos) << r.out;
  EXPECT_EQ(fds[0], "/dev/null");
  for (const auto &[fd, target] : fds) {
    // Beyond stdio, only ls's own listing of /proc/self/fd.
    if (fd > 2) {
      EXPECT_TRUE(target.starts_with("/proc/")) << fd << " -> " << target;
    }
  }
  EXPECT_LE(fds.size(), 4u) << r.out;
}

}  // namespace
}  // namespace sandbox_host::broker
