// The system calls `run --learn` stops to look at: those that name a path or an address a
// plugin's Spec may not grant. The learn filter notifies the host of each before it runs
// (host/include/sandbox_host/host/seccomp/traced_call.hpp) and then lets it run.
#pragma once

#include <array>

namespace sandbox_host::backends {

// sendmmsg too: a resolver's query to port 53 names the host a plugin looks up, and glibc
// sends its A and AAAA questions together with sendmmsg. Never sendmsg: stage 1 hands the
// filter's listener to the host with sendmsg after loading the filter, which would then
// wait for an answer from the host that only the listener could bring.
inline constexpr std::array kLearnTracedCalls{
    "open",     "openat",     "creat",    "execve",    "execveat",  "stat",
    "lstat",    "newfstatat", "statx",    "access",    "faccessat", "faccessat2",
    "readlink", "readlinkat", "chdir",    "mkdir",     "mkdirat",   "unlink",
    "unlinkat", "rename",     "renameat", "renameat2", "link",      "linkat",
    "symlink",  "symlinkat",  "truncate", "connect",   "sendto",    "sendmmsg",
};

}  // namespace sandbox_host::backends
