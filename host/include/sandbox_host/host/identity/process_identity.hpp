// Who asked: the processes holding a request, where they run, and a pidfd that pins one.
// Who holds a request, where it runs and whether it is sandboxed, read from a proc directory
// (normally /proc): docs/design.md#broker-protocol.
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sandbox_host::broker {

// The processes of user uid under proc_dir that hold the file dev:ino open, but `except`
// (the broker itself): one pid per process, whatever its threads. Scans every process.
std::vector<pid_t> holders(const std::filesystem::path &proc_dir, dev_t dev, ino_t ino, uid_t uid,
                           pid_t except = 0);

// Whether process pid holds dev:ino open: a scan of that one process's descriptors.
bool holds(const std::filesystem::path &proc_dir, pid_t pid, dev_t dev, ino_t ino);

// pid's descendants (children, their children, ...), as far as they can be read now.
std::vector<pid_t> descendants(const std::filesystem::path &proc_dir, pid_t pid);

// The real and effective uid of process pid, when they are the same; nullopt otherwise
// or when it is gone.
std::optional<uid_t> process_uid(const std::filesystem::path &proc_dir, pid_t pid);

struct Origin {
  std::string cwd;               // as the process's own mount namespace names it
  std::vector<std::string> env;  // "NAME=VALUE" for each of keys it has, in keys' order
};
// Where process pid runs: its working directory and, of its environment, keys only.
// Throws std::system_error when it is gone or its /proc files cannot be read.
Origin origin(const std::filesystem::path &proc_dir, pid_t pid,
              const std::vector<std::string> &keys);

// Whether process pid is sandboxed: it runs in another mount namespace than proc_dir's own
// process ("self"), as under the namespaces backend or bubblewrap, or it carries the mark
// every process of a sandbox-host sandbox carries (sandbox_mark.hpp), as under Landlock,
// which keeps the host's mount namespace. Throws std::system_error when it is gone.
bool sandboxed(const std::filesystem::path &proc_dir, pid_t pid);

// The pid, in this process's pid namespace, of the process holding a POSIX record lock on
// the open file fd that conflicts with a write lock on all of it; nullopt when none does.
std::optional<pid_t> lock_owner(int fd);

// The inode of process pid's pid namespace: which sandbox it runs in, as far as the
// namespaces backend makes one each; nullopt when it cannot be read.
std::optional<ino_t> pid_namespace(const std::filesystem::path &proc_dir, pid_t pid);

// The inode of the socket at the other end of the connected unix socket fd (sock_diag's
// UNIX_DIAG_PEER); nullopt when the kernel does not say.
std::optional<ino_t> unix_peer_inode(int fd);

// A pidfd for pid (pidfd_open), or an invalid fd when the process is gone.
UniqueFd open_pidfd(pid_t pid);

// The pidfd of the process at the other end of the connected unix socket connection, whose
// SO_PEERCRED pid is pid: the kernel's own (SO_PEERPIDFD, Linux 6.5), which names the
// process that connected whatever happened since; before 6.5 one by pid, kept only if that
// process holds the other end of this very connection, so that a pid reused since the
// connect cannot stand in for the peer. Invalid when neither names it.
UniqueFd connection_peer_pidfd(int connection, pid_t pid, const std::filesystem::path &proc_dir);

// connection_peer_pidfd's way before Linux 6.5, on its own so that a newer kernel tests it:
// a pidfd of pid, kept only if pid holds the other end of connection (sock_diag's
// UNIX_DIAG_PEER) and still runs once that was read.
UniqueFd peer_pidfd_by_holder(int connection, pid_t pid, const std::filesystem::path &proc_dir);
// Whether the process of pidfd still runs (it has not exited).
bool running(int pidfd);

}  // namespace sandbox_host::broker
