// A loopback port for a config that names its listener, for tests that cannot take the port
// from the listener itself: one that was free a moment ago, chosen below the kernel's
// ephemeral range. A port the kernel hands out itself (bound to port 0) is one it may hand
// out again, as the source port of any test's next outgoing connection, before the listener
// that named it binds: under a parallel suite's floods that happened.
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <stdexcept>

namespace sandbox_host::test {

inline bool loopback_port_free(std::uint16_t port) {
  const UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  return fd && ::bind(fd.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) == 0;
}

inline std::uint16_t free_loopback_port() {
  // The ephemeral range's first port (32768 where /proc does not say).
  unsigned ephemeral = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeral;
  const unsigned low = 10000;
  const unsigned high = ephemeral > low + 1000 ? ephemeral - 1 : 32767;
  std::mt19937 random(std::random_device{}() ^ static_cast<unsigned>(::getpid()));
  std::uniform_int_distribution<unsigned> pick(low, high);
  for (int tries = 0; tries < 200; ++tries) {
    const auto port = static_cast<std::uint16_t>(pick(random));
    if (loopback_port_free(port)) return port;
  }
  throw std::runtime_error("no free loopback port below the ephemeral range");
}

}  // namespace sandbox_host::test
