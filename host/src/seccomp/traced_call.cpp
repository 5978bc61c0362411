#include <sandbox_host/host/seccomp/traced_call.hpp>

#include <sys/ioctl.h>

namespace sandbox_host {

// Weak: the host's seccomp supervisor (seccomp/seccomp_supervisor.cpp) defines it too, and
// its definition wins once both are linked; this one lets run --learn's reading be built
// and tested against real processes without it.
__attribute__((weak)) bool TracedCall::still_pending() const noexcept {
  std::uint64_t cookie = id;
  return listener >= 0 && ::ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &cookie) == 0;
}

}  // namespace sandbox_host
