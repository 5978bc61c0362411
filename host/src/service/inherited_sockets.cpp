#include <sandbox_host/host/service/inherited_sockets.hpp>

#include "service_variables.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <system_error>

namespace sandbox_host {
namespace fs = std::filesystem;
namespace {

// sd_listen_fds(3): the first inherited descriptor.
constexpr int kFirstInheritedFd = 3;

template <typename Number>
Number parse_number(const std::string &text, const char *variable) {
  const auto value = service_variables::number<Number>(text);
  if (!value)
    throw std::invalid_argument(std::string(variable) + " \"" + text + "\": not a number");
  return *value;
}

std::vector<std::string> split_names(const std::string &names) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t colon = names.find(':', start);
    out.push_back(names.substr(start, colon - start));
    if (colon == std::string::npos) return out;
    start = colon + 1;
  }
}

int socket_option(int fd, int option) {
  int value = 0;
  socklen_t length = sizeof value;
  if (::getsockopt(fd, SOL_SOCKET, option, &value, &length) != 0) return -1;
  return value;
}

std::string type_name(int type) {
  switch (type) {
    case SOCK_STREAM:
      return "stream (ListenStream=)";
    case SOCK_SEQPACKET:
      return "seqpacket (ListenSequentialPacket=)";
    case SOCK_DGRAM:
      return "datagram (ListenDatagram=)";
    default:
      return "type " + std::to_string(type);
  }
}

std::string family_name(int family) {
  switch (family) {
    case AF_UNIX:
      return "unix";
    case AF_INET:
      return "inet";
    case AF_INET6:
      return "inet6";
    default:
      return "family " + std::to_string(family);
  }
}

// The path a unix socket is bound at; empty for any other socket, or an abstract one.
std::string bound_path(int fd) {
  sockaddr_un address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) != 0 ||
      address.sun_family != AF_UNIX || length <= offsetof(sockaddr_un, sun_path) ||
      address.sun_path[0] == '\0') {
    return {};
  }
  return std::string(address.sun_path,
                     ::strnlen(address.sun_path, length - offsetof(sockaddr_un, sun_path)));
}

std::string describe(const std::string &name, int fd) {
  const int family = socket_option(fd, SO_DOMAIN);
  std::string text = "inherited socket \"" + name + "\" (fd " + std::to_string(fd) + ", ";
  if (family < 0) return text + "not a socket)";
  text += family_name(family) + " " + type_name(socket_option(fd, SO_TYPE));
  const std::string path = bound_path(fd);
  return text + (path.empty() ? "" : " at " + path) + ")";
}

}  // namespace

InheritedSockets InheritedSockets::from_environment() {
  InheritedSockets inherited;
  const auto listen_pid = service_variables::take("LISTEN_PID");
  const auto listen_fds = service_variables::take("LISTEN_FDS");
  const auto listen_names = service_variables::take("LISTEN_FDNAMES");
  if (!listen_pid || !listen_fds) return inherited;
  // Variables a parent left for itself, passed on by mistake: their descriptors are not ours.
  if (parse_number<pid_t>(*listen_pid, "LISTEN_PID") != ::getpid()) return inherited;
  const int count = parse_number<int>(*listen_fds, "LISTEN_FDS");
  if (count < 0 || count > 4096) {
    throw std::invalid_argument("LISTEN_FDS \"" + *listen_fds + "\": out of range");
  }
  std::vector<std::string> names;
  if (listen_names) names = split_names(*listen_names);
  if (listen_names && names.size() != static_cast<std::size_t>(count)) {
    throw std::invalid_argument("LISTEN_FDNAMES \"" + *listen_names + "\" names " +
                                std::to_string(names.size()) + " sockets, LISTEN_FDS says " +
                                std::to_string(count));
  }
  for (int i = 0; i < count; ++i) {
    const int fd = kFirstInheritedFd + i;
    // First of all: no child of serve may inherit it, whatever comes below.
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags < 0 || ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) != 0) {
      throw std::system_error(errno, std::generic_category(),
                              "LISTEN_FDS: inherited descriptor " + std::to_string(fd));
    }
    // systemd names a socket without FileDescriptorName= "unknown"; so does this.
    inherited.sockets_.push_back({listen_names ? names[i] : "unknown", UniqueFd(fd)});
  }
  return inherited;
}

UniqueFd InheritedSockets::take(const std::string &name, int type, const fs::path &path) {
  for (auto it = sockets_.begin(); it != sockets_.end(); ++it) {
    if (it->name != name || bound_path(it->fd.get()) != path.string()) continue;
    const int fd = it->fd.get();
    const std::string expected =
        "serve expects a listening unix " + type_name(type) + " socket at " + path.string();
    if (socket_option(fd, SO_DOMAIN) != AF_UNIX || socket_option(fd, SO_TYPE) != type) {
      throw std::runtime_error(describe(name, fd) + ": " + expected);
    }
    if (socket_option(fd, SO_ACCEPTCONN) != 1) {
      throw std::runtime_error(describe(name, fd) + " does not listen: " + expected);
    }
    UniqueFd taken = std::move(it->fd);
    sockets_.erase(it);
    return taken;
  }
  return UniqueFd();
}

void InheritedSockets::require_all_taken(const std::string &expected) const {
  if (sockets_.empty()) return;
  std::string unserved;
  for (const Socket &socket : sockets_) {
    unserved += (unserved.empty() ? "" : "; ") + describe(socket.name, socket.fd.get());
  }
  throw std::runtime_error(unserved +
                           ": matches no socket serve's config and --socket options "
                           "expect (" +
                           expected + ")");
}

}  // namespace sandbox_host
