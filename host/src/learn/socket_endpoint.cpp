#include <sandbox_host/host/learn/socket_endpoint.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstring>

namespace sandbox_host::learn {

bool Endpoint::loopback() const noexcept {
  if (family == Family::inet) return address.starts_with("127.");
  if (family == Family::inet6) return address == "::1" || address.starts_with("::ffff:127.");
  return false;
}

std::string Endpoint::describe() const {
  switch (family) {
    case Family::inet:
      return address + ":" + std::to_string(port);
    case Family::inet6:
      return "[" + address + "]:" + std::to_string(port);
    case Family::unix_path:
      return address;
    case Family::unix_abstract:
      return "@" + address;
  }
  return address;
}

std::optional<Endpoint> parse_sockaddr(std::string_view bytes) {
  sa_family_t family = AF_UNSPEC;
  if (bytes.size() < sizeof family) return std::nullopt;
  std::memcpy(&family, bytes.data(), sizeof family);
  Endpoint endpoint;
  if (family == AF_INET) {
    sockaddr_in in{};
    if (bytes.size() < sizeof in) return std::nullopt;
    std::memcpy(&in, bytes.data(), sizeof in);
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    endpoint.family = Endpoint::Family::inet;
    endpoint.address = text;
    endpoint.port = ntohs(in.sin_port);
    return endpoint;
  }
  if (family == AF_INET6) {
    sockaddr_in6 in6{};
    if (bytes.size() < sizeof in6) return std::nullopt;
    std::memcpy(&in6, bytes.data(), sizeof in6);
    char text[INET6_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    endpoint.family = Endpoint::Family::inet6;
    endpoint.address = text;
    endpoint.port = ntohs(in6.sin6_port);
    return endpoint;
  }
  if (family == AF_UNIX) {
    constexpr std::size_t offset = offsetof(sockaddr_un, sun_path);
    if (bytes.size() <= offset) return std::nullopt;  // unnamed
    std::string_view path = bytes.substr(offset, sizeof(sockaddr_un::sun_path));
    if (path.front() == '\0') {
      endpoint.family = Endpoint::Family::unix_abstract;
      endpoint.address = std::string(path.substr(1));
    } else {
      endpoint.family = Endpoint::Family::unix_path;
      endpoint.address = std::string(path.substr(0, path.find('\0')));
    }
    return endpoint;
  }
  return std::nullopt;
}

}  // namespace sandbox_host::learn
