#include <sandbox_host/host/probe.hpp>

#include <linux/landlock.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sandbox_host {

int kernel_landlock_abi() noexcept {
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

}  // namespace sandbox_host
