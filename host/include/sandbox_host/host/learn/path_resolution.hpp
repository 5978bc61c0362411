// The absolute path a traced thread names, as the host reads it: a relative path joined to
// the thread's working directory or to the directory its descriptor holds. Under the
// namespaces backend the plugin's tree shows each granted host path at the same absolute
// path, and the host's readlink of /proc/<tid>/cwd or /proc/<tid>/fd/<n> gives that path.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace sandbox_host::learn {

// dirfd as the call's argument holds it; AT_FDCWD (or kNoDirfd) for the working directory.
inline constexpr int kNoDirfd = -100;  // AT_FDCWD

// path made absolute and lexically clean (no ".", ".." or "//"); nullopt for an empty path,
// a descriptor that is no directory of a file system (a socket, a pipe, a deleted
// directory), or a thread that is gone.
std::optional<std::string> absolute_path(pid_t tid, int dirfd, const std::string &path);

// What /proc/<tid>/<entry> links to, when it is an absolute path.
std::optional<std::string> proc_link(pid_t tid, const std::string &entry);

}  // namespace sandbox_host::learn
