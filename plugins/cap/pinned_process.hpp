// The requester as the broker pinned it (Requester::pidfd). A cgroup takes a process by
// its number, so the number is read from the pidfd itself, never from the request, and the
// pidfd then shows whether that process still ran once the move was made.
#pragma once

#include <sys/types.h>

namespace sandbox_host::cap {

class PinnedProcess {
 public:
  // Throws when pidfd is -1 (no pidfd on this kernel), names no process, or the process
  // has exited.
  explicit PinnedProcess(int pidfd);
  // Its pid in this process's pid namespace.
  pid_t pid() const noexcept { return pid_; }
  // Throws when the process exited since it was pinned: its number may have named another
  // process when it was written.
  void check_still_running() const;

 private:
  int pidfd_;
  pid_t pid_;
};

}  // namespace sandbox_host::cap
