// The requester's number, as its pidfd gives it (pinned_process.hpp).
#include "pinned_process.hpp"

#include <poll.h>

#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

namespace sandbox_host::cap {
namespace {

// The "Pid:" line of the pidfd's fdinfo: the pid in the pid namespace of this /proc,
// -1 once the process exited; nothing for a descriptor that is no pidfd.
std::optional<long> pid_of(int pidfd) {
  std::ifstream info("/proc/self/fdinfo/" + std::to_string(pidfd));
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("Pid:", 0) == 0) return std::stol(line.substr(4));
  }
  return std::nullopt;
}

bool has_exited(int pidfd) {
  pollfd poll_fd{pidfd, POLLIN, 0};
  return ::poll(&poll_fd, 1, 0) > 0;
}

}  // namespace

PinnedProcess::PinnedProcess(int pidfd) : pidfd_(pidfd), pid_(0) {
  if (pidfd < 0) {
    throw std::runtime_error(
        "the broker has no pidfd for the requester (Linux 5.3 or later is needed), and a bare "
        "pid is never moved");
  }
  const auto pid = pid_of(pidfd);
  if (!pid) throw std::runtime_error("the requester's descriptor is no pidfd");
  if (*pid <= 0 || has_exited(pidfd)) throw std::runtime_error("the requester has exited");
  pid_ = static_cast<pid_t>(*pid);
}

void PinnedProcess::check_still_running() const {
  if (has_exited(pidfd_) || pid_of(pidfd_) != pid_) {
    throw std::runtime_error("the requester (pid " + std::to_string(pid_) +
                             ") exited while it was being moved");
  }
}

}  // namespace sandbox_host::cap
