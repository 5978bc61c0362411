#include "loopback.hpp"

#include <sandbox_host/backends/setup_error.hpp>

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace sandbox_host::namespaces {

void bring_up_loopback() {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) backends::throw_errno("network", "socket");
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  request.ifr_flags = IFF_UP | IFF_RUNNING;
  int rc = ::ioctl(fd, SIOCSIFFLAGS, &request);
  int error = errno;
  ::close(fd);
  if (rc != 0) backends::throw_errno("network", "bring lo up", error);
}

}  // namespace sandbox_host::namespaces
