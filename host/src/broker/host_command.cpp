#include <sandbox_host/host/broker/host_command.hpp>
#include <sandbox_host/host/identity/process_identity.hpp>
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
#include <optional>
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

namespace {

// The command's stdio: stdout and stderr always, stdin only for input to send.
struct CommandPipes {
  Pipe out, err, in;
};

CommandPipes make_pipes(const HostCommand &command) {
  CommandPipes pipes{make_pipe(), make_pipe(), {}};
  if (!command.input.empty()) pipes.in = make_pipe();
  return pipes;
}

// Its stdio the pipes' (stdin /dev/null without input), its directory the requester's or
// command.cwd, nothing else open.
void add_file_actions(SpawnActions &actions, const HostCommand &command, const CommandIo &io,
                      const CommandPipes &pipes) {
  auto *fa = actions.get();
  if (pipes.in.read) {
    SpawnActions::check(::posix_spawn_file_actions_adddup2(fa, pipes.in.read.get(), 0), "stdin");
  } else {
    SpawnActions::check(::posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0),
                        "stdin");
  }
  SpawnActions::check(::posix_spawn_file_actions_adddup2(fa, pipes.out.write.get(), 1), "stdout");
  SpawnActions::check(::posix_spawn_file_actions_adddup2(fa, pipes.err.write.get(), 2), "stderr");
  if (io.cwd_fd >= 0) {
    SpawnActions::check(::posix_spawn_file_actions_addfchdir_np(fa, io.cwd_fd), "cwd");
  } else {
    const std::string cwd = command.cwd.empty() ? "/" : command.cwd;
    SpawnActions::check(::posix_spawn_file_actions_addchdir_np(fa, cwd.c_str()), "cwd");
  }
  // Whatever another thread opened without O_CLOEXEC stays out of the command.
  SpawnActions::check(::posix_spawn_file_actions_addclosefrom_np(fa, 3), "closefrom");
}

pid_t spawn_command(const HostCommand &command, const CommandIo &io, const CommandPipes &pipes) {
  SpawnActions actions;
  add_file_actions(actions, command, io, pipes);
  SpawnAttributes attributes;
  std::vector<std::string> argv{command.path};
  argv.insert(argv.end(), command.args.begin(), command.args.end());
  std::vector<std::string> envp = command.env;
  auto argv_c = c_strings(argv);
  auto envp_c = c_strings(envp);
  pid_t pid = 0;
  if (int error = ::posix_spawn(&pid, command.path.c_str(), actions.get(), attributes.get(),
                                argv_c.data(), envp_c.data());
      error != 0) {
    fail("cannot run " + command.path, error);
  }
  return pid;
}

// The running command, watched until it ended and its output is drained: its input sent,
// its output handed on, and cut short when its time, its output cap or its requester runs out.
class CommandWatch {
 public:
  CommandWatch(const HostCommand &command, CommandIo &io, CommandPipes &pipes, pid_t pid,
               const UniqueFd &pidfd)
      : command_(command),
        io_(io),
        pipes_(pipes),
        pid_(pid),
        pidfd_(pidfd),
        wake_fd_(io.wake_fd),
        deadline_(command.timeout.count() > 0 ? Clock::now() + command.timeout
                                              : Clock::time_point::max()) {}

  CommandResult run() {
    while (pipes_.out.read || pipes_.err.read || !ended_) {
      if (ended_ && Clock::now() >= drain_until_) break;
      std::vector<pollfd> fds = poll_set();
      if (::poll(fds.data(), fds.size(), static_cast<int>(wait_time().count())) < 0 &&
          errno != EINTR) {
        cut("poll: " + std::system_category().message(errno));
      }
      for (const auto &fd : fds) {
        if (fd.revents != 0) handle(fd.fd);
      }
      if (!result_.error.empty() || ended_) continue;
      check_bounds();
    }
    result_.code = exit_code(*ended_);
    return result_;
  }

 private:
  // Output still open after the command ended belongs to something that left its session;
  // it gets a second to finish, not the operation's whole life.
  static constexpr auto kDrainGrace = std::chrono::seconds(1);

  std::vector<pollfd> poll_set() const {
    std::vector<pollfd> fds;
    auto watch = [&](const UniqueFd &fd, short events) {
      if (fd) fds.push_back({fd.get(), events, 0});
    };
    watch(pipes_.out.read, POLLIN);
    watch(pipes_.err.read, POLLIN);
    watch(pipes_.in.write, POLLOUT);
    if (!ended_) fds.push_back({pidfd_.get(), POLLIN, 0});
    if (wake_fd_ >= 0 && result_.error.empty()) fds.push_back({wake_fd_, io_.wake_events, 0});
    return fds;
  }

  // A tick at most, and no later than the deadline or the end of the drain.
  std::chrono::milliseconds wait_time() const {
    auto wait = io_.tick;
    for (auto until : {deadline_, drain_until_}) {
      if (until == Clock::time_point::max()) continue;
      wait = std::min(wait, std::chrono::ceil<std::chrono::milliseconds>(
                                std::max(until - Clock::now(), Clock::duration::zero())));
    }
    return wait;
  }

  void handle(int fd) {
    if (fd == wake_fd_) {
      // Reported once: a requester's exit stays readable, and the tick asks after it.
      wake_fd_ = -1;
    } else if (fd == pipes_.in.write.get()) {
      send_input(fd);
    } else if (fd == pipes_.out.read.get() || fd == pipes_.err.read.get()) {
      take_output(fd, fd == pipes_.out.read.get());
    } else if (fd == pidfd_.get()) {
      reap();
    }
  }

  void send_input(int fd) {
    const std::string &input = command_.input;
    const ssize_t n = ::write(fd, input.data() + input_sent_, input.size() - input_sent_);
    if (n > 0) input_sent_ += static_cast<std::size_t>(n);
    if ((n < 0 && errno != EAGAIN && errno != EINTR) || input_sent_ == input.size()) {
      pipes_.in.write.reset();
    }
  }

  // Handed on as it comes, until stdout and stderr together pass io.max_output.
  void take_output(int fd, bool is_out) {
    const ssize_t n = ::read(fd, buffer_.data(), buffer_.size());
    if (n <= 0) {
      (is_out ? pipes_.out : pipes_.err).read.reset();
      return;
    }
    output_ += static_cast<std::size_t>(n);
    if (io_.max_output != 0 && output_ > io_.max_output) {
      if (result_.error.empty()) {
        cut("output of more than " + std::to_string(io_.max_output) +
            " bytes (the broker's max_reply_bytes)");
      }
      return;
    }
    (is_out ? io_.out : io_.err)(std::string_view(buffer_.data(), static_cast<std::size_t>(n)));
  }

  // What it left running in its session ends with it: killed before the reap, while the
  // zombie still holds the group's number.
  void reap() {
    ::kill(-pid_, SIGKILL);
    siginfo_t info{};
    if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd_.get()), &info, WEXITED) ==
        0) {
      ended_ = info;
      drain_until_ = Clock::now() + kDrainGrace;
    }
  }

  void check_bounds() {
    if (Clock::now() >= deadline_) {
      cut("timed out after " + std::to_string(command_.timeout.count()) + " ms");
    } else if (io_.requester_gone && io_.requester_gone()) {
      cut("its requester no longer holds the request");
    }
  }

  // Signals go by pid only while the command is not reaped: until then its zombie holds
  // the number, and its process group's, so no other process can have taken them.
  void cut(std::string why) {
    if (!ended_) {
      kill_process_tree(pid_);
    } else {
      pipes_.out.read.reset();
      pipes_.err.read.reset();
    }
    result_.error = std::move(why);
  }

  const HostCommand &command_;
  CommandIo &io_;
  CommandPipes &pipes_;
  const pid_t pid_;
  const UniqueFd &pidfd_;
  int wake_fd_;
  const Clock::time_point deadline_;
  Clock::time_point drain_until_ = Clock::time_point::max();
  std::size_t input_sent_ = 0, output_ = 0;
  CommandResult result_;
  std::optional<siginfo_t> ended_;
  std::array<char, 16384> buffer_{};
};

}  // namespace

CommandResult run_host_command(const HostCommand &command, CommandIo &io) {
  if (command.path.empty() || command.path.front() != '/') {
    fail("command \"" + command.path + "\" is not an absolute path", EINVAL);
  }
  CommandPipes pipes = make_pipes(command);
  const pid_t pid = spawn_command(command, io, pipes);
  const OwnChild own(pid);  // this function reaps it
  UniqueFd pidfd = open_pidfd(pid);
  if (!pidfd) fail("pidfd_open for " + command.path);
  pipes.out.write.reset();
  pipes.err.write.reset();
  pipes.in.read.reset();
  // Non-blocking: input larger than the pipe must not stop the loop that watches the
  // timeout and the requester, nor wait on a command that does not read it.
  if (pipes.in.write && ::fcntl(pipes.in.write.get(), F_SETFL, O_NONBLOCK) != 0) {
    fail("fcntl stdin");
  }
  return CommandWatch(command, io, pipes, pid, pidfd).run();
}

}  // namespace sandbox_host::broker
