// Fuzzes what `run --learn` reads from a plugin's messages: the DNS question of a datagram
// to port 53, the host of a request to the egress proxy, a socket address. The plugin wrote
// every byte; each parser must end, stay in bounds and keep its results' promises.
#include "fuzz_check.hpp"

#include <sandbox_host/host/learn/dns_question.hpp>
#include <sandbox_host/host/learn/proxy_request.hpp>
#include <sandbox_host/host/learn/socket_endpoint.hpp>

#include <sys/un.h>

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  using sandbox_host::egress::fuzz::check;
  namespace learn = sandbox_host::learn;
  const std::string_view input(reinterpret_cast<const char *>(data), size);

  if (const auto name = learn::dns_question(input)) {
    check(!name->empty(), "a question names something");
    check(name->size() <= 254, "a name within 255 bytes of wire form");
    for (const char c : *name) check(c < 'A' || c > 'Z', "a name in lowercase");
  }
  if (const auto target = learn::proxy_target(input)) {
    check(!target->host.empty(), "a target has a host");
    check(target->port != 0, "a target has a port");
    check(target->host.size() <= 300, "a host within the authority's bound");
    check(target->host.find('\0') == std::string::npos || input.front() == 5,
          "only SOCKS5's counted names carry any byte");
  }
  if (const auto endpoint = learn::parse_sockaddr(input)) {
    using Family = learn::Endpoint::Family;
    if (endpoint->family == Family::unix_path || endpoint->family == Family::unix_abstract) {
      check(endpoint->address.size() <= sizeof(sockaddr_un::sun_path), "a unix path in bounds");
    }
  }
  return 0;
}
