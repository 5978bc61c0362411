// A launch's processes where it has no cgroup to list them: the launch's own process and
// everything below it, as /proc's children lists show them.
#pragma once

#include <sys/types.h>

#include <vector>

namespace sandbox_host {

// pid and every process below it now.
std::vector<pid_t> process_tree(pid_t pid);

// SIGKILL to the process of pidfd (pid) and everything below it, stopped first (SIGSTOP)
// until the tree holds no process that was not, so that none forks a child the kill misses
// or leaves one that init adopts out of the tree. Each is signalled through a pidfd opened
// while its parent was still found to be pid or one stopped already, never through a pid that may
// have been taken by another process since it was listed. Nothing when pid was reaped already.
void kill_process_tree(int pidfd, pid_t pid);

}  // namespace sandbox_host
