// The default filter as libseccomp rules, for the build-time generator and for tests.
#pragma once

#include <sandbox_host/backends/seccomp_channel.hpp>
#include <sandbox_host/seccomp_refusals.hpp>

#include <seccomp.h>

#include <memory>
#include <string_view>

namespace sandbox_host::backends {

using sandbox_host::DeniedSyscall;

// The whole list, in the order it is documented.
const DeniedSyscall *denied_syscalls(unsigned &count) noexcept;

using SeccompContext = std::unique_ptr<void, decltype(&seccomp_release)>;

// Verdicts (seccomp_channel.hpp) says how a filter answers a refusal. clone3 and openat2 are
// answered ENOSYS by the filter under every one: libc falls back to clone and openat, whose
// arguments the filter can read, at each thread a program starts, which is no refusal.
SeccompContext build_default_filter(Verdicts verdicts = Verdicts::errno_only);

// What a filter stands in for, where a backend has no namespace to do it.
enum class Substitute {
  nothing,                 // the default filter
  ipc_namespace,           // and System V IPC and POSIX message queues refused (EPERM)
  ipc_and_net_namespaces,  // and socket(2) of every family but AF_UNIX too (EAFNOSUPPORT):
                           // network "none"
};
SeccompContext build_filter(Substitute substitute, Verdicts verdicts = Verdicts::errno_only);
// The system calls of ipc_namespace, for the docs' test.
const char *const *shared_ipc_calls(unsigned &count) noexcept;

}  // namespace sandbox_host::backends
