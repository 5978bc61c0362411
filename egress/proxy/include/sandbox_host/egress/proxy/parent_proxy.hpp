// The operator's own HTTP proxy ([egress.parent]): every connection the egress proxy allows
// is dialled through it with CONNECT, to the address the destination rules checked, so the
// allow list, the address rules, the peer check and the token stay this proxy's.
#pragma once

#include <sandbox_host/egress/destination/ip_address.hpp>
#include <sandbox_host/egress/proxy/token_keeper.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace sandbox_host::egress {

struct ParentProxy {
  std::string host;  // a name or an IP literal; the destination rules do not apply to it
  std::uint16_t port = 0;
  // "user:password" sent as Basic Proxy-Authorization; null: none is sent.
  std::shared_ptr<Token> credential;

  std::string to_string() const;  // "proxy.example:3128", "[fd00::1]:3128"
};

struct ParentTunnel {
  UniqueFd fd;  // the tunnel, ready for the client's bytes; empty on failure
  // On failure: the status the proxy answers its client with (403 when the parent refused
  // the destination, 504 when it took too long, else 502) and why, naming the parent and
  // what it said, never the credential.
  int status = 0;
  std::string refusal;
  // The parent itself refused (its answer was not 2xx): another address of the same
  // destination would meet the same answer.
  bool answered = false;
};

// Resolves the parent, connects to its addresses in turn, asks it for a tunnel to
// target:port and reads its answer, each step within bound. Only the answer's head is read,
// so the destination's first bytes stay in the tunnel. Blocks.
ParentTunnel tunnel_through(const ParentProxy &parent, const IpAddress &target, std::uint16_t port,
                            std::chrono::milliseconds bound);

}  // namespace sandbox_host::egress
