#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <thread>

extern char **environ;

namespace sandbox_host::test {
namespace {

std::vector<char *> c_strings(const std::vector<std::string> &strings) {
  std::vector<char *> out;
  for (const auto &s : strings) out.push_back(const_cast<char *>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

void drain(int fd, std::string &into) {
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      into.append(buffer, static_cast<size_t>(n));
      continue;
    }
    return;
  }
}

}  // namespace

RunningProcess::RunningProcess(const std::vector<std::string> &argv,
                               const ProcessOptions &options) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (options.stdin_fd) {
    posix_spawn_file_actions_adddup2(&actions, *options.stdin_fd, 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  if (options.cwd) posix_spawn_file_actions_addchdir_np(&actions, options.cwd->c_str());
  auto args = c_strings(argv);
  std::vector<char *> env = options.env ? c_strings(*options.env) : std::vector<char *>{};
  int rc = ::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(),
                         options.env ? env.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    throw std::system_error(rc, std::generic_category(), "posix_spawn " + argv[0]);
  }
  out_fd_ = out[0];
  err_fd_ = err[0];
  ::fcntl(out_fd_, F_SETFL, O_NONBLOCK);
  ::fcntl(err_fd_, F_SETFL, O_NONBLOCK);
}

RunningProcess::~RunningProcess() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
}

std::optional<std::string> RunningProcess::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto newline = out_buffer_.find('\n'); newline != std::string::npos) {
      std::string line = out_buffer_.substr(0, newline);
      out_buffer_.erase(0, newline + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    if (::poll(fds, 2, static_cast<int>(left.count())) <= 0) continue;
    size_t before = out_buffer_.size();
    drain(out_fd_, out_buffer_);
    drain(err_fd_, err_buffer_);
    if (out_buffer_.size() == before && (fds[0].revents & POLLHUP) != 0) return std::nullopt;
  }
}

ProcessResult RunningProcess::wait(std::chrono::milliseconds timeout) {
  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      ::kill(pid_, SIGKILL);
      break;
    }
    pollfd fds[2] = {{out_open ? out_fd_ : -1, POLLIN, 0}, {err_open ? err_fd_ : -1, POLLIN, 0}};
    if (::poll(fds, 2, static_cast<int>(left.count())) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents == 0) continue;
      std::string &into = i == 0 ? out_buffer_ : err_buffer_;
      char buffer[4096];
      ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        into.append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        (i == 0 ? out_open : err_open) = false;
      }
    }
  }
  int status = 0;
  ::waitpid(pid_, &status, 0);
  reaped_ = true;
  if (WIFEXITED(status)) result.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = std::move(out_buffer_);
  result.err = std::move(err_buffer_);
  return result;
}

ProcessResult run_process(const std::vector<std::string> &argv, const ProcessOptions &options) {
  RunningProcess process(argv, options);
  return process.wait(options.timeout);
}

bool process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  auto close_paren = line.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < line.size() &&
         line[close_paren + 2] == 'Z';
}

bool gone_within(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!process_gone(pid)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace sandbox_host::test
