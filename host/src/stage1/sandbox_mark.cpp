#include <sandbox_host/host/sandbox_mark.hpp>

#include <sandbox_host/host/identity/process_identity.hpp>

#include <sys/resource.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace sandbox_host {

void mark_this_process_sandboxed() {
  const rlimit zero{0, 0};
  if (::setrlimit(RLIMIT_RTTIME, &zero) != 0) {
    throw std::system_error(errno, std::generic_category(), "setrlimit RLIMIT_RTTIME 0");
  }
}

namespace {

// The hard RLIMIT_RTTIME of pid as /proc/<pid>/limits shows it ("Max realtime timeout",
// soft, hard, unit), which the kernel shows to every user, unlike prlimit(2).
bool limits_file_shows_mark(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/limits";
  std::ifstream limits(path);
  if (!limits) {
    throw std::system_error(errno, std::generic_category(), "cannot open " + path);
  }
  const std::string name = "Max realtime timeout";
  for (std::string line; std::getline(limits, line);) {
    if (!line.starts_with(name)) continue;
    std::istringstream values(line.substr(name.size()));
    std::string soft;
    std::string hard;
    if (!(values >> soft >> hard)) break;
    return hard == "0";
  }
  throw std::runtime_error(path + " has no \"" + name + "\" line with a hard limit");
}

}  // namespace

bool carries_sandbox_mark(pid_t pid) {
  rlimit limit{};
  if (::prlimit(pid, RLIMIT_RTTIME, nullptr, &limit) == 0) return limit.rlim_max == 0;
  // Another uid's process, without CAP_SYS_RESOURCE (a root serve in a container that
  // withholds it): the same limit, from the file.
  if (errno == EPERM) return limits_file_shows_mark(pid);
  throw std::system_error(errno, std::generic_category(),
                          "prlimit RLIMIT_RTTIME of pid " + std::to_string(pid));
}

void read_pinned_peer(int connection, pid_t pid, const std::function<void()> &read) {
  if (pid <= 0) {
    throw std::runtime_error("the peer is in a pid namespace this process cannot see");
  }
  const UniqueFd pinned = broker::connection_peer_pidfd(connection, pid, "/proc");
  if (!pinned) throw std::runtime_error("the peer is gone, or no longer holds its connection");
  read();
  // Read by number; the pidfd says that number still named the peer while it was read (an
  // exited peer, a zombie too, is refused: its number is another's once it is reaped).
  if (!broker::running(pinned.get())) throw std::runtime_error("the peer exited meanwhile");
}

bool peer_carries_sandbox_mark(int connection, pid_t pid) {
  bool marked = false;
  read_pinned_peer(connection, pid, [&] { marked = carries_sandbox_mark(pid); });
  return marked;
}

}  // namespace sandbox_host
