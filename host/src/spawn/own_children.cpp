#include <sandbox_host/host/own_children.hpp>

#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <mutex>

namespace sandbox_host {
namespace {

std::mutex own_mutex;
std::set<pid_t> &own_children() {
  static std::set<pid_t> children;
  return children;
}

bool is_own(pid_t pid) {
  std::lock_guard lock(own_mutex);
  return own_children().contains(pid);
}

// Every thread's children: a child belongs to the thread that made it.
std::set<pid_t> children_of_this_process() {
  std::set<pid_t> found;
  std::error_code ec;
  for (const auto &task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "children");
    for (pid_t child; in >> child;) found.insert(child);
  }
  return found;
}

bool has_exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

}  // namespace

OwnChild::OwnChild(pid_t pid) : pid_(pid) {
  std::lock_guard lock(own_mutex);
  own_children().insert(pid);
}

OwnChild::~OwnChild() {
  std::lock_guard lock(own_mutex);
  own_children().erase(pid_);
}

std::size_t StrayReaper::reap() {
  std::set<pid_t> strays;
  for (pid_t child : children_of_this_process()) {
    if (!is_own(child) && has_exited(child)) strays.insert(child);
  }
  std::size_t reaped = 0;
  for (pid_t stray : strays) {
    // Seen last time too, and named by nobody since: nobody will wait for it.
    if (seen_.contains(stray) && !is_own(stray) && ::waitpid(stray, nullptr, WNOHANG) == stray) {
      ++reaped;
    }
  }
  seen_ = std::move(strays);
  return reaped;
}

}  // namespace sandbox_host
