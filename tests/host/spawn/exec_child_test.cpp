// What spawn()'s child gets between its vfork and its execve, read by the started program
// from /proc/self/status and its own descriptors: every signal unblocked and none of the
// host's handlers, stdio at 0, 1 and 2 whichever way the host's descriptors lie, the passed
// descriptors and no other, its own session; and the host's memory as it was.
#include <sandbox_host/host/spawn.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>

namespace sandbox_host {
namespace {

std::atomic<int> handled{0};
void count_signal(int) {
  ++handled;
}

std::string read_all(int fd) {
  std::string got;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) got.append(buffer, n);
  return got;
}

std::string status_line(const std::string &status, const std::string &key) {
  std::istringstream lines(status);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(key + ":", 0) == 0) return line.substr(key.size() + 2);
  }
  return "";
}

class ExecChild : public ::testing::Test {
 protected:
  void SetUp() override {
    int ends[2];
    ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
    read_ = ends[0];
    write_ = ends[1];
  }
  void TearDown() override {
    ::close(read_);
    if (write_ >= 0) ::close(write_);
  }
  // After spawn(): the test's copy closed, so that the read ends with the child.
  void close_write() {
    ::close(write_);
    write_ = -1;
  }
  int read_ = -1, write_ = -1;
};

TEST_F(ExecChild, StartsWithNoSignalBlockedAndNoneOfTheHostsHandlers) {
  struct sigaction counting = {};
  counting.sa_handler = count_signal;
  struct sigaction usr1_before, term_before;
  ASSERT_EQ(::sigaction(SIGUSR1, &counting, &usr1_before), 0);
  ASSERT_EQ(::sigaction(SIGTERM, &counting, &term_before), 0);
  sigset_t blocked, previous;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR2);
  sigaddset(&blocked, SIGHUP);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &blocked, &previous), 0);

  LaunchCommand command;
  command.program = "/bin/cat";
  command.args = {"/proc/self/status"};
  command.env = {};
  Child child = spawn(command, {}, {0, write_, 2});
  close_write();
  EXPECT_EQ(child.wait().shell_status(), 0);
  const std::string status = read_all(read_);

  EXPECT_EQ(status_line(status, "SigBlk"), "0000000000000000") << status;
  EXPECT_EQ(status_line(status, "SigCgt"), "0000000000000000") << status;
  // The host's own handlers and mask are as they were.
  struct sigaction usr1_now;
  ASSERT_EQ(::sigaction(SIGUSR1, nullptr, &usr1_now), 0);
  EXPECT_EQ(usr1_now.sa_handler, &count_signal);
  sigset_t now;
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, nullptr, &now), 0);
  EXPECT_EQ(sigismember(&now, SIGUSR2), 1);
  EXPECT_EQ(sigismember(&now, SIGUSR1), 0);
  EXPECT_EQ(handled.load(), 0);

  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ::sigaction(SIGUSR1, &usr1_before, nullptr);
  ::sigaction(SIGTERM, &term_before, nullptr);
}

TEST_F(ExecChild, StdioLandsOnZeroOneAndTwoEvenWhenTheHostsAreCrossed) {
  // The child's stdout is the host's 2 and its stderr the host's 1: each must land where it
  // was asked, not where an earlier dup2 left it.
  int err_pipe[2];
  ASSERT_EQ(::pipe2(err_pipe, O_CLOEXEC), 0);
  const int saved_out = ::dup(1), saved_err = ::dup(2);
  ASSERT_GE(saved_out, 0);
  ASSERT_GE(saved_err, 0);
  std::fflush(stdout);
  ::dup2(write_, 2);       // the host's 2: the stdout pipe
  ::dup2(err_pipe[1], 1);  // the host's 1: the stderr pipe
  LaunchCommand command;
  command.program = "/bin/sh";
  command.args = {"-c", "echo to-stdout; echo to-stderr >&2"};
  ExitStatus status;
  {
    Child child = spawn(command, {}, {0, 2, 1});
    ::dup2(saved_out, 1);
    ::dup2(saved_err, 2);
    status = child.wait();
  }
  ::close(saved_out);
  ::close(saved_err);
  ::close(err_pipe[1]);
  close_write();
  EXPECT_EQ(status.shell_status(), 0);
  EXPECT_EQ(read_all(read_), "to-stdout\n");
  EXPECT_EQ(read_all(err_pipe[0]), "to-stderr\n");
  ::close(err_pipe[0]);
}

TEST_F(ExecChild, KeepsThePassedDescriptorsAndNoOther) {
  const int leaked = ::open("/etc/hostname", O_RDONLY);  // not close-on-exec
  ASSERT_GE(leaked, 0);
  const int passed = ::open("/etc/passwd", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(passed, 0);
  LaunchCommand command;
  command.program = "/bin/ls";
  command.args = {"/proc/self/fd"};
  Child child = spawn(command, {passed}, {0, write_, 2});
  close_write();
  EXPECT_EQ(child.wait().shell_status(), 0);
  const std::string listed = read_all(read_);
  std::istringstream names(listed);
  std::vector<int> fds;
  for (std::string name; names >> name;) fds.push_back(std::stoi(name));
  // 0, 1, 2, the passed one and ls's own directory descriptor.
  EXPECT_NE(std::find(fds.begin(), fds.end(), passed), fds.end()) << listed;
  EXPECT_EQ(std::find(fds.begin(), fds.end(), leaked), fds.end()) << listed;
  EXPECT_EQ(fds.size(), 5u) << listed;
  ::close(leaked);
  ::close(passed);
}

TEST_F(ExecChild, AFailedExecLeavesTheHostsMemoryAndErrnoReadable) {
  LaunchCommand command;
  command.program = "/nonexistent/dir/program";
  errno = 0;
  try {
    spawn(command, {}, {0, write_, 2});
    FAIL() << "spawned a missing program";
  } catch (const std::system_error &e) {
    EXPECT_EQ(e.code().value(), ENOENT);
    EXPECT_EQ(std::string(e.what()).rfind("spawn /nonexistent/dir/program: execve", 0), 0u)
        << e.what();
  }
  // The host goes on: another launch from the same thread works.
  LaunchCommand echo;
  echo.program = "/bin/echo";
  echo.args = {"again"};
  Child child = spawn(echo, {}, {0, write_, 2});
  close_write();
  EXPECT_EQ(child.wait().shell_status(), 0);
  EXPECT_EQ(read_all(read_), "again\n");
}

std::atomic<pid_t> host_pid{0};
std::atomic<bool> handler_ran_in_a_child{false};
void note_where_it_ran(int) {
  if (::getpid() != host_pid.load()) handler_ran_in_a_child = true;
}

TEST_F(ExecChild, NoHostHandlerRunsInAChildBeforeItsExec) {
  // Signals to the host's process group, as a terminal's ^C sends them, reach a child that
  // has not left the group yet: in a vfork child the host's handler would run on the host's
  // memory. The handler notes where it ran; it must only ever be the host.
  ASSERT_EQ(::setpgid(0, 0), 0);  // a group of the test's own, not its runner's
  host_pid = ::getpid();
  struct sigaction noting = {}, before;
  noting.sa_handler = note_where_it_ran;
  ASSERT_EQ(::sigaction(SIGUSR1, &noting, &before), 0);
  std::atomic<bool> done{false};
  std::thread sender([&] {
    while (!done) {
      ::killpg(::getpgrp(), SIGUSR1);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  });
  int exited_zero = 0;
  for (int i = 0; i < 300; ++i) {
    LaunchCommand command;
    command.program = "/bin/true";
    try {
      Child child = spawn(command, {}, {0, 1, 2});
      // A child that took the signal before it blocked... cannot: the default ends it.
      const ExitStatus status = child.wait();
      if (status.shell_status() == 0) ++exited_zero;
    } catch (const std::system_error &) {
      // The child died of the default action before its exec: allowed, and safe.
    }
  }
  done = true;
  sender.join();
  ::sigaction(SIGUSR1, &before, nullptr);
  EXPECT_FALSE(handler_ran_in_a_child.load());
  EXPECT_GT(exited_zero, 0);
}

TEST_F(ExecChild, ManyThreadsSpawnAtOnceAndEachChildIsItsOwn) {
  // vfork suspends only the calling thread: the others go on spawning meanwhile.
  std::vector<std::thread> threads;
  std::atomic<int> exited_zero{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        LaunchCommand command;
        command.program = "/bin/true";
        Child child = spawn(command, {}, {0, 1, 2});
        if (child.wait().shell_status() == 0) ++exited_zero;
      }
    });
  }
  for (auto &thread : threads) thread.join();
  EXPECT_EQ(exited_zero.load(), 160);
}

}  // namespace
}  // namespace sandbox_host
