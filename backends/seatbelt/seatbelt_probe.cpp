#include "seatbelt_probe.hpp"

#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>

namespace sandbox_host::seatbelt {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxDiagnostic = 4096;

// Stated where an operator reads the probe's verdict: what confinement by seatbelt lacks
// compared with the namespaces backend.
constexpr std::string_view kCoverageWarning =
    "sandbox-exec is deprecated by Apple and may change or disappear in a macOS release; no pid "
    "isolation: the plugin runs among the launching user's other processes (the profile refuses "
    "it their process information and signals, nothing more); no resource limits; no system "
    "call filter: the whole kernel interface stays reachable; with network outbound the plugin "
    "reaches every address the user can, the host's loopback services included; this profile "
    "has not yet been run on macOS by sandbox-host's own tests";

constexpr std::string_view kLinuxHint =
    "seatbelt confines plugins on macOS only; on Linux the namespaces backend (or landlock, "
    "where user namespaces are blocked) does that; remove \"seatbelt\" from backends.enabled "
    "to leave it out of this list";

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Reads the child's stderr until it closes or the deadline passes.
std::string read_until(int fd, Clock::time_point deadline) {
  std::string text;
  for (;;) {
    pollfd readable{fd, POLLIN, 0};
    int ready = ::poll(&readable, 1, remaining_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return text;
    char buffer[512];
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return text;
    if (text.size() < kMaxDiagnostic) text.append(buffer, static_cast<size_t>(n));
  }
}

// The child's wait status, or nullopt when it outlived the deadline (it is killed then).
std::optional<int> reap_until(pid_t pid, Clock::time_point deadline) {
  for (;;) {
    int status = 0;
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return std::nullopt;
    if (Clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return std::nullopt;
    }
    ::poll(nullptr, 0, 10);
  }
}

std::string first_line(const std::string &text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

ProbeReport unavailable(std::string reason, std::string hint) {
  ProbeReport report;
  report.reason = std::move(reason);
  report.hint = std::move(hint);
  return report;
}

bool exists(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

ProbeReport probe_sandbox_exec(const SandboxExecProbe &probe) {
  if (!probe.macos) {
    if (!exists(probe.sandbox_exec)) {
      return unavailable("sandbox-exec not found: seatbelt is macOS only", std::string(kLinuxHint));
    }
    return unavailable("seatbelt is macOS only: " + probe.sandbox_exec +
                           " exists, but this sandbox-host was built for another system",
                       std::string(kLinuxHint));
  }
  if (!exists(probe.sandbox_exec)) {
    return unavailable("sandbox-exec not found: " + probe.sandbox_exec + " is missing",
                       "seatbelt needs Apple's sandbox-exec, which Apple has deprecated; this "
                       "macOS may no longer ship it");
  }

  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) {
    return unavailable(
        std::string("cannot run ") + probe.sandbox_exec + ": pipe: " + std::strerror(errno), "");
  }
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  // Only the child's fd 2 should hold the pipe: another copy would keep it from closing.
  ::fcntl(read_end.get(), F_SETFD, FD_CLOEXEC);
  ::fcntl(write_end.get(), F_SETFD, FD_CLOEXEC);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  std::string profile = "(version 1)(allow default)";
  std::string flag = "-p";
  std::string program = probe.sandbox_exec;
  std::string trivial = probe.trivial_program;
  char *argv[] = {program.data(), flag.data(), profile.data(), trivial.data(), nullptr};
  char *empty_env[] = {nullptr};
  pid_t pid = -1;
  int spawn_error = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, empty_env);
  posix_spawn_file_actions_destroy(&actions);
  write_end.reset();
  if (spawn_error != 0) {
    return unavailable("cannot run " + program + ": " + std::strerror(spawn_error),
                       "check that " + program + " is Apple's and executable");
  }

  const auto deadline = Clock::now() + probe.timeout;
  const std::string diagnostic = first_line(read_until(read_end.get(), deadline));
  const std::optional<int> status = reap_until(pid, deadline);
  const std::string what = program + " -p '" + profile + "' " + trivial;
  if (!status) {
    return unavailable(
        what + " did not finish within " + std::to_string(probe.timeout.count()) + " ms",
        "a hung sandbox-exec points at the macOS sandbox service; retry, and "
        "check the system log");
  }
  if (WIFSIGNALED(*status)) {
    return unavailable(what + " was killed by signal " + std::to_string(WTERMSIG(*status)),
                       "check the system log for the reason");
  }
  if (WEXITSTATUS(*status) != 0) {
    return unavailable(what + " exited " + std::to_string(WEXITSTATUS(*status)) +
                           (diagnostic.empty() ? std::string() : ": " + diagnostic),
                       "the message above is sandbox-exec's; one common cause: it cannot apply a "
                       "profile from inside another sandbox, so run sandbox-host unsandboxed");
  }
  ProbeReport report;
  report.available = true;
  report.warning = std::string(kCoverageWarning);
  return report;
}

}  // namespace sandbox_host::seatbelt
