// The running kernel's Landlock ABI version: what the Landlock backend restricts by, and
// what every Linux backend's probe reports (ProbeReport::landlock_abi), so that the host
// learns it from the backend it chose and asks the kernel nothing itself.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

namespace sandbox_host::landlock {

// landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION); 0 when Landlock is
// unsupported or disabled. The flag is spelled here: the build host's <linux/landlock.h>
// may predate it.
inline int kernel_abi() noexcept {
  constexpr unsigned kCreateRulesetVersion = 1U << 0;
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

}  // namespace sandbox_host::landlock
