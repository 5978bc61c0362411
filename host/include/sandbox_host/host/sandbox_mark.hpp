// The mark every process of a sandbox carries, which a host service reads to tell a
// sandboxed peer from its own callers without the peer's help: RLIMIT_RTTIME's hard limit
// at 0.
//
// Why it holds:
// - stage1() sets it first, before anything of the sandbox exists, for every backend that
//   re-executes stage 1; every process the plugin makes inherits it across fork, clone and
//   execve.
// - No sandboxed process can lift it: raising a hard limit takes CAP_SYS_RESOURCE in the
//   initial user namespace (setrlimit(2), prlimit(2)), which no sandbox holds (the
//   namespaces backend's capabilities are its own user namespace's; Landlock's launch drops
//   every capability and the bounding set).
// - The kernel tells it for any process of the same uid (prlimit(2) with no new limit),
//   whatever that process's /proc, dumpable flag or seccomp filter; for another uid's, to
//   CAP_SYS_RESOURCE by prlimit(2), and to anyone by /proc/<pid>/limits, which has no
//   ptrace check (unless /proc is mounted hidepid).
// - It takes nothing from a plugin: RLIMIT_RTTIME bounds only realtime-scheduled threads,
//   which a sandbox cannot make (no CAP_SYS_NICE; RLIMIT_RTPRIO is 0 unless its operator
//   raised it, and then such a thread is killed at once). A gateway that lowered its own
//   RLIMIT_RTTIME hard limit to 0 is taken for a sandbox and refused.
#pragma once

#include <sys/types.h>

#include <functional>

namespace sandbox_host {

// Puts the mark on this process; throws std::system_error when the kernel refuses.
void mark_this_process_sandboxed();

// Whether the process pid carries the mark: prlimit(2), or /proc/<pid>/limits where
// prlimit is refused (another uid's process, without CAP_SYS_RESOURCE). Throws when neither
// will say (ESRCH: it is gone).
bool carries_sandbox_mark(pid_t pid);

// Runs read(pid) for the process at the other end of the connected unix socket
// `connection`, whose SO_PEERCRED pid is pid, while that process is pinned as the peer
// (broker::connection_peer_pidfd): whatever read learns by pid is that process's, since a
// pid reused since the connect cannot answer for it. Throws std::runtime_error naming why
// when the kernel cannot say (the peer is gone, is a zombie, or no longer holds its end).
void read_pinned_peer(int connection, pid_t pid, const std::function<void()> &read);

// carries_sandbox_mark for the peer of connection, read by read_pinned_peer.
bool peer_carries_sandbox_mark(int connection, pid_t pid);

}  // namespace sandbox_host
