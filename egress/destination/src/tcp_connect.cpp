#include <sandbox_host/egress/destination/tcp_connect.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <system_error>

namespace sandbox_host::egress {

Connected connect_within(const IpAddress &address, std::uint16_t port,
                         std::chrono::milliseconds bound) {
  socklen_t length = 0;
  const sockaddr_storage target = address.to_sockaddr(port, length);
  UniqueFd fd(::socket(target.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) {
    throw std::system_error(errno, std::generic_category(), "cannot make a socket");
  }
  int error = 0;
  if (::connect(fd.get(), reinterpret_cast<const sockaddr *>(&target), length) != 0) {
    error = errno;
    if (error == EINPROGRESS) {
      pollfd ready{fd.get(), POLLOUT, 0};
      const int waited = ::poll(&ready, 1, static_cast<int>(bound.count()));
      socklen_t size = sizeof error;
      if (waited == 0) {
        error = ETIMEDOUT;
      } else if (waited < 0) {
        error = errno;
      } else if ((ready.revents & (POLLERR | POLLHUP)) == 0) {
        error = 0;  // writable and no error: connected
      } else if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size) != 0) {
        error = errno;
      }
    }
  }
  if (error != 0) return {UniqueFd(), error};
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return {std::move(fd), 0};
}

}  // namespace sandbox_host::egress
