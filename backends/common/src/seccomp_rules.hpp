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

}  // namespace sandbox_host::backends
