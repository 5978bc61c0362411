// One TCP connection attempt with a bound on how long it may take: the egress proxy's dial
// of a checked destination address, and of the parent proxy.
#pragma once

#include <sandbox_host/egress/destination/ip_address.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <chrono>
#include <cstdint>

namespace sandbox_host::egress {

struct Connected {
  UniqueFd fd;    // connected, non-blocking, TCP_NODELAY; empty on failure
  int error = 0;  // the errno of the failure, ETIMEDOUT past the bound
};

// Throws std::system_error when no socket can be made at all (out of descriptors).
Connected connect_within(const IpAddress &address, std::uint16_t port,
                         std::chrono::milliseconds bound);

}  // namespace sandbox_host::egress
