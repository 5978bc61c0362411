// The default filter as libseccomp rules, for the build-time generator and for tests.
#pragma once

#include <seccomp.h>

#include <memory>
#include <string_view>

namespace sandbox_host::backends {

// One entry of the default filter's deny list, with why it is there.
struct DeniedSyscall {
  std::string_view name;
  std::string_view reason;
};
// The whole list, in the order it is documented.
const DeniedSyscall *denied_syscalls(unsigned &count) noexcept;

using SeccompContext = std::unique_ptr<void, decltype(&seccomp_release)>;

SeccompContext build_default_filter();

// What a filter stands in for, where a backend has no namespace to do it.
enum class Substitute {
  nothing,                 // the default filter
  ipc_namespace,           // and System V IPC and POSIX message queues refused (EPERM)
  ipc_and_net_namespaces,  // and socket(2) of every family but AF_UNIX too (EAFNOSUPPORT):
                           // network "none"
};
SeccompContext build_filter(Substitute substitute);
// The system calls of ipc_namespace, for the docs' test.
const char *const *shared_ipc_calls(unsigned &count) noexcept;

}  // namespace sandbox_host::backends
