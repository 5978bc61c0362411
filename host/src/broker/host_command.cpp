#include <sandbox_host/host/broker/host_command.hpp>
#include <sandbox_host/host/broker/process_identity.hpp>
#include <sandbox_host/host/own_children.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <system_error>
#include <vector>

namespace sandbox_host::broker {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string &what, int error = errno) {
  throw std::system_error(error, std::generic_category(), what);
}

struct Pipe {
  UniqueFd read, write;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) fail("pipe");
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

class SpawnActions {
 public:
  SpawnActions() { check(::posix_spawn_file_actions_init(&actions_), "file actions"); }
  ~SpawnActions() { ::posix_spawn_file_actions_destroy(&actions_); }
  SpawnActions(const SpawnActions &) = delete;
  SpawnActions &operator=(const SpawnActions &) = delete;
  posix_spawn_file_actions_t *get() { return &actions_; }
  static void check(int error, const char *what) {
    if (error != 0) fail(std::string("posix_spawn ") + what, error);
  }

 private:
  posix_spawn_file_actions_t actions_{};
};

class SpawnAttributes {
 public:
  SpawnAttributes() {
    SpawnActions::check(::posix_spawnattr_init(&attr_), "attributes");
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    ::posix_spawnattr_setsigmask(&attr_, &none);
    ::posix_spawnattr_setsigdefault(&attr_, &all);
    // Its own session and process group: the group is how it is ended with its children.
    ::posix_spawnattr_setflags(&attr_,
                               POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  ~SpawnAttributes() { ::posix_spawnattr_destroy(&attr_); }
  SpawnAttributes(const SpawnAttributes &) = delete;
  SpawnAttributes &operator=(const SpawnAttributes &) = delete;
  const posix_spawnattr_t *get() const { return &attr_; }

 private:
  posix_spawnattr_t attr_{};
};

std::vector<char *> c_strings(std::vector<std::string> &strings) {
  std::vector<char *> out;
  for (auto &s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int exit_code(const siginfo_t &info) {
  return info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
}

}  // namespace

void kill_process_tree(pid_t pid) {
  // Descendants first, while they still hang below pid; then the group, which catches
  // those forked meanwhile; then the snapshot, which catches those that left the group.
  std::vector<UniqueFd> tree;
  for (pid_t child : descendants("/proc", pid)) {
    if (UniqueFd fd = open_pidfd(child)) tree.push_back(std::move(fd));
  }
  ::kill(-pid, SIGKILL);
  for (const auto &fd : tree) ::syscall(SYS_pidfd_send_signal, fd.get(), SIGKILL, nullptr, 0);
}

CommandResult run_host_command(const HostCommand &command, CommandIo &io) {
  if (command.path.empty() || command.path.front() != '/') {
    fail("command \"" + command.path + "\" is not an absolute path", EINVAL);
  }
  Pipe out = make_pipe(), err = make_pipe();
  Pipe in;
  if (!command.input.empty()) in = make_pipe();

  SpawnActions actions;
  auto *fa = actions.get();
  if (in.read) {
    SpawnActions::check(::posix_spawn_file_actions_adddup2(fa, in.read.get(), 0), "stdin");
  } else {
    SpawnActions::check(::posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0),
                        "stdin");
  }
  SpawnActions::check(::posix_spawn_file_actions_adddup2(fa, out.write.get(), 1), "stdout");
  SpawnActions::check(::posix_spawn_file_actions_adddup2(fa, err.write.get(), 2), "stderr");
  if (io.cwd_fd >= 0) {
    SpawnActions::check(::posix_spawn_file_actions_addfchdir_np(fa, io.cwd_fd), "cwd");
  } else {
    const std::string cwd = command.cwd.empty() ? "/" : command.cwd;
    SpawnActions::check(::posix_spawn_file_actions_addchdir_np(fa, cwd.c_str()), "cwd");
  }
  // Whatever another thread opened without O_CLOEXEC stays out of the command.
  SpawnActions::check(::posix_spawn_file_actions_addclosefrom_np(fa, 3), "closefrom");
  SpawnAttributes attributes;

  std::vector<std::string> argv{command.path};
  argv.insert(argv.end(), command.args.begin(), command.args.end());
  std::vector<std::string> envp = command.env;
  auto argv_c = c_strings(argv);
  auto envp_c = c_strings(envp);
  pid_t pid = 0;
  if (int error = ::posix_spawn(&pid, command.path.c_str(), fa, attributes.get(), argv_c.data(),
                                envp_c.data());
      error != 0) {
    fail("cannot run " + command.path, error);
  }
  const OwnChild own(pid);  // this function reaps it
  UniqueFd pidfd = open_pidfd(pid);
  if (!pidfd) fail("pidfd_open for " + command.path);
  out.write.reset();
  err.write.reset();
  in.read.reset();
  // Non-blocking: input larger than the pipe must not stop the loop that watches the
  // timeout and the requester, nor wait on a command that does not read it.
  if (in.write && ::fcntl(in.write.get(), F_SETFL, O_NONBLOCK) != 0) fail("fcntl stdin");

  std::size_t input_sent = 0, output = 0;
  const auto deadline =
      command.timeout.count() > 0 ? Clock::now() + command.timeout : Clock::time_point::max();
  CommandResult result;
  std::optional<siginfo_t> ended;
  int wake_fd = io.wake_fd;
  std::array<char, 16384> buffer{};
  // Signals go by pid only while the command is not reaped: until then its zombie holds
  // the number, and its process group's, so no other process can have taken them.
  auto cut = [&](std::string why) {
    if (!ended) {
      kill_process_tree(pid);
    } else {
      out.read.reset();
      err.read.reset();
    }
    result.error = std::move(why);
  };
  // Output still open after the command ended belongs to something that left its session;
  // it gets a second to finish, not the operation's whole life.
  constexpr auto kDrainGrace = std::chrono::seconds(1);
  auto drain_until = Clock::time_point::max();
  while (out.read || err.read || !ended) {
    if (ended && Clock::now() >= drain_until) break;
    std::vector<pollfd> fds;
    auto watch = [&](const UniqueFd &fd, short events) {
      if (fd) fds.push_back({fd.get(), events, 0});
    };
    watch(out.read, POLLIN);
    watch(err.read, POLLIN);
    watch(in.write, POLLOUT);
    if (!ended) fds.push_back({pidfd.get(), POLLIN, 0});
    if (wake_fd >= 0 && result.error.empty()) fds.push_back({wake_fd, io.wake_events, 0});
    auto wait = io.tick;
    for (auto until : {deadline, drain_until}) {
      if (until == Clock::time_point::max()) continue;
      wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(
                                std::max(until - Clock::now(), Clock::duration::zero())));
    }
    if (::poll(fds.data(), fds.size(), static_cast<int>(wait.count())) < 0 && errno != EINTR) {
      cut("poll: " + std::system_category().message(errno));
    }
    for (const auto &fd : fds) {
      if (fd.revents == 0) continue;
      if (fd.fd == wake_fd) {
        // Reported once: a requester's exit stays readable, and the tick asks after it.
        wake_fd = -1;
      } else if (fd.fd == in.write.get()) {
        const ssize_t n =
            ::write(fd.fd, command.input.data() + input_sent, command.input.size() - input_sent);
        if (n > 0) input_sent += static_cast<std::size_t>(n);
        if ((n < 0 && errno != EAGAIN && errno != EINTR) || input_sent == command.input.size()) {
          in.write.reset();
        }
      } else if (fd.fd == out.read.get() || fd.fd == err.read.get()) {
        const bool is_out = fd.fd == out.read.get();
        const ssize_t n = ::read(fd.fd, buffer.data(), buffer.size());
        if (n <= 0) {
          (is_out ? out : err).read.reset();
          continue;
        }
        output += static_cast<std::size_t>(n);
        if (io.max_output != 0 && output > io.max_output) {
          if (result.error.empty()) {
            cut("output of more than " + std::to_string(io.max_output) +
                " bytes (the broker's max_reply_bytes)");
          }
          continue;
        }
        (is_out ? io.out : io.err)(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
      } else if (fd.fd == pidfd.get()) {
        // What it left running in its session ends with it: killed before the reap, while
        // the zombie still holds the group's number.
        ::kill(-pid, SIGKILL);
        siginfo_t info{};
        if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd.get()), &info,
                     WEXITED) == 0) {
          ended = info;
          drain_until = Clock::now() + kDrainGrace;
        }
      }
    }
    if (!result.error.empty() || ended) continue;
    if (Clock::now() >= deadline) {
      cut("timed out after " + std::to_string(command.timeout.count()) + " ms");
    } else if (io.requester_gone && io.requester_gone()) {
      cut("its requester no longer holds the request");
    }
  }
  result.code = exit_code(*ended);
  return result;
}

}  // namespace sandbox_host::broker
