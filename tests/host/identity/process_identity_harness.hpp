// What the tests of process_identity.hpp share: a forked copy of the test that holds what it
// set up until released (Child), a file of its own held open (HeldFile), a child become nobody,
// and the /proc they read.
#pragma once

#include <sandbox_host/host/identity/process_identity.hpp>
#include <sandbox_host/host/sandbox_mark.hpp>

#include <fixtures.hpp>
#include <process.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace sandbox_host::broker::identity_harness {

using test::gone_within;

namespace fs = std::filesystem;

using namespace std::chrono_literals;

inline std::pair<UniqueFd, UniqueFd> cloexec_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// Reads exactly size bytes from fd within timeout; false on EOF, error or timeout.
inline bool read_within(int fd, void *data, std::size_t size, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto *bytes = static_cast<char *>(data);
  for (std::size_t got = 0; got < size;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::read(fd, bytes + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

// A forked copy of the test: runs setup (whose result, an int, it reports), then waits for
// release() and exits 0. Killed and reaped on destruction.
class Child {
 public:
  explicit Child(const std::function<int()> &setup) {
    auto [ready_read, ready_write] = cloexec_pipe();
    auto [release_read, release_write] = cloexec_pipe();
    pid_ = ::fork();
    if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork");
    if (pid_ == 0) {
      ready_read.reset();
      release_write.reset();
      const int result = setup();
      if (::write(ready_write.get(), &result, sizeof result) != sizeof result) ::_exit(3);
      char byte = 0;
      while (::read(release_read.get(), &byte, 1) < 0 && errno == EINTR) {
      }
      ::_exit(0);
    }
    ready_ = std::move(ready_read);
    release_ = std::move(release_write);
  }
  ~Child() { kill(); }
  Child(const Child &) = delete;
  Child &operator=(const Child &) = delete;

  pid_t pid() const noexcept { return pid_; }

  // What setup returned, once it did (bounded); nullopt if it never reported.
  std::optional<int> result() {
    if (!result_ && ready_) {
      int value = 0;
      if (read_within(ready_.get(), &value, sizeof value, 10s)) result_ = value;
      ready_.reset();
    }
    return result_;
  }

  // Lets the child exit 0 (it may stay a zombie until reaped).
  void release() {
    const char byte = 'x';
    if (release_) (void)!::write(release_.get(), &byte, 1);
    release_.reset();
  }

  // Reaps the child, waiting at most timeout; its wait status, or nullopt.
  std::optional<int> reap(std::chrono::milliseconds timeout = 10s) {
    if (reaped_) return status_;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        reaped_ = true;
        status_ = status;
        return status;
      }
      if (done < 0 || std::chrono::steady_clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(10ms);
    }
  }

  void kill() {
    if (reaped_ || pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    status_ = status;
  }

 private:
  pid_t pid_ = -1;
  UniqueFd ready_, release_;
  std::optional<int> result_;
  bool reaped_ = false;
  int status_ = 0;
};

inline constexpr uid_t kNobody = 65534;
inline const fs::path kProc = "/proc";

inline std::vector<pid_t> sorted(std::vector<pid_t> pids) {
  std::sort(pids.begin(), pids.end());
  return pids;
}

// A file of its own, opened (close-on-exec: forks inherit it, execs do not).
struct HeldFile {
  HeldFile() : file("held"), fd(::open(file.path().c_str(), O_RDWR | O_CLOEXEC)) {
    if (!fd || ::fstat(fd.get(), &status) != 0) {
      throw std::system_error(errno, std::generic_category(), "open " + file.path().string());
    }
  }
  test::TempFile file;
  UniqueFd fd;
  struct stat status {};
};

inline int become_nobody(bool dumpable) {
  if (::setresgid(kNobody, kNobody, kNobody) != 0 || ::setresuid(kNobody, kNobody, kNobody) != 0) {
    return -errno;
  }
  // Changing uids makes a process non-dumpable: its /proc/<pid>/fd turns root's, while
  // /proc/<pid> itself keeps showing its effective uid.
  if (dumpable && ::prctl(PR_SET_DUMPABLE, 1) != 0) return -errno;
  return 0;
}

}  // namespace sandbox_host::broker::identity_harness
