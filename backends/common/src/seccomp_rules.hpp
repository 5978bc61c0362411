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
// The default filter, and socket(2) refused for every family but AF_UNIX: network "none"
// for a backend without a network namespace.
SeccompContext build_unix_sockets_only_filter();

}  // namespace sandbox_host::backends
