// sd_notify(3) documents its protocol as stable and meant to be reimplemented: one datagram
// of assignments to the unix socket NOTIFY_SOCKET names. It is done here rather than by
// linking libsystemd. Not for the launch path's sake: serve runs in sandbox-host-broker,
// and stage 1 is sandbox-host, which never loads the broker's libraries. But libsystemd0
// brings liblzma, libzstd, liblz4, libgcrypt and libcap into the process that reads every
// sandbox's requests; today only the cap-slot and scope operations' modules load it, and
// only where the config enables them. A few lines here keep it that way.
#include <sandbox_host/host/service/service_manager.hpp>

#include "service_variables.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>

namespace sandbox_host {
ServiceManager ServiceManager::from_environment() {
  ServiceManager manager;
  const auto notify_socket = service_variables::take("NOTIFY_SOCKET");
  const auto watchdog_usec = service_variables::take("WATCHDOG_USEC");
  const auto watchdog_pid = service_variables::take("WATCHDOG_PID");
  if (!notify_socket || notify_socket->empty()) return manager;

  const std::string &where = *notify_socket;
  // A path, or an abstract name written with a leading '@' (its NUL on the wire).
  if (where.front() != '/' && where.front() != '@') {
    throw std::invalid_argument("NOTIFY_SOCKET \"" + where +
                                "\": neither an absolute unix socket path nor an abstract "
                                "name (@NAME); serve notifies over unix sockets only");
  }
  if (where.size() >= sizeof manager.address_.sun_path) {
    throw std::invalid_argument("NOTIFY_SOCKET \"" + where + "\": longer than a unix socket " +
                                "address may be (" +
                                std::to_string(sizeof manager.address_.sun_path - 1) + " bytes)");
  }
  manager.address_.sun_family = AF_UNIX;
  std::memcpy(manager.address_.sun_path, where.data(), where.size());
  if (where.front() == '@') manager.address_.sun_path[0] = '\0';
  manager.address_length_ = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + where.size() +
                                                   (where.front() == '/' ? 1 : 0));
  manager.socket_.reset(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!manager.socket_) {
    throw std::system_error(errno, std::generic_category(), "NOTIFY_SOCKET: socket");
  }

  // A WATCHDOG_USEC meant for another process (WATCHDOG_PID not ours) asks nothing of serve.
  const bool watchdog_is_ours = !watchdog_pid || service_variables::number<pid_t>(*watchdog_pid) ==
                                                     std::optional<pid_t>(::getpid());
  if (watchdog_usec && watchdog_is_ours) {
    const auto usec = service_variables::number<std::uint64_t>(*watchdog_usec);
    if (!usec || *usec == 0) {
      throw std::invalid_argument("WATCHDOG_USEC \"" + *watchdog_usec +
                                  "\": not a positive number of microseconds");
    }
    manager.watchdog_interval_ = std::chrono::microseconds(*usec);
  }
  return manager;
}

void ServiceManager::notify(std::string_view state) const noexcept {
  if (!socket_) return;
  while (::sendto(socket_.get(), state.data(), state.size(), MSG_NOSIGNAL,
                  reinterpret_cast<const sockaddr *>(&address_), address_length_) < 0 &&
         errno == EINTR) {
  }
}

}  // namespace sandbox_host
