#include "process_tree.hpp"

#include <sandbox_host/host/identity/process_identity.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <utility>

namespace sandbox_host {
namespace {

// The parent of the process /proc/<pid> is now; -1 when it is gone.
pid_t parent_of(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // The name in parentheses may hold anything, a ")" too: the fields follow the last one.
  const std::size_t name_end = stat.rfind(')');
  if (name_end == std::string::npos) return -1;
  std::istringstream fields(stat.substr(name_end + 1));
  std::string state;
  pid_t parent = -1;
  fields >> state >> parent;
  return parent;
}

}  // namespace

std::vector<pid_t> process_tree(pid_t pid) {
  std::vector<pid_t> tree{pid};
  for (pid_t below : broker::descendants("/proc", pid)) tree.push_back(below);
  return tree;
}

void kill_process_tree(int pidfd, pid_t pid) {
  if (::syscall(SYS_pidfd_send_signal, pidfd, SIGSTOP, nullptr, 0) != 0) return;
  // Bounded: a tree that still grows after this many rounds is killed as far as it was found.
  constexpr int kRounds = 64;
  std::map<pid_t, UniqueFd> stopped;
  for (int round = 0; round < kRounds; ++round) {
    bool found_new = false;
    for (pid_t member : broker::descendants("/proc", pid)) {
      if (stopped.count(member) != 0) continue;
      UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, member, 0)));
      // Gone, or the pid is another's now: its parent is neither pid nor one stopped here.
      const pid_t parent = fd ? parent_of(member) : -1;
      if (parent != pid && stopped.count(parent) == 0) continue;
      ::syscall(SYS_pidfd_send_signal, fd.get(), SIGSTOP, nullptr, 0);
      stopped.emplace(member, std::move(fd));
      found_new = true;
    }
    if (!found_new) break;
  }
  ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
  for (const auto &[member, fd] : stopped) {
    ::syscall(SYS_pidfd_send_signal, fd.get(), SIGKILL, nullptr, 0);
  }
}

}  // namespace sandbox_host
