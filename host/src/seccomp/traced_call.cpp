#include <sandbox_host/host/seccomp/traced_call.hpp>

#include <sys/ioctl.h>

namespace sandbox_host {

bool TracedCall::still_pending() const noexcept {
  std::uint64_t cookie = id;
  return listener >= 0 && ::ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &cookie) == 0;
}

}  // namespace sandbox_host
