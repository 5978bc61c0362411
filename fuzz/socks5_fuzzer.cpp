// Fuzzes the SOCKS5 greeting and request parsers: results consistent and the same at every
// length the bytes could arrive in, and a request taken is exactly the bytes it was read from.
#include "fuzz_check.hpp"

#include <sandbox_host/egress/proxy/socks5.hpp>

#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <string>

namespace sandbox_host::egress::fuzz {
namespace {

bool same(const GreetingParse &a, const GreetingParse &b) {
  return a.state == b.state && a.consumed == b.consumed && a.error == b.error &&
         a.greeting.no_auth_offered == b.greeting.no_auth_offered;
}

bool same(const RequestParse5 &a, const RequestParse5 &b) {
  return a.state == b.state && a.consumed == b.consumed && a.error == b.error &&
         (a.state != ParseState::error || a.reply == b.reply) && a.request.host == b.request.host &&
         a.request.port == b.request.port && a.request.type == b.request.type;
}

template <typename Result, typename Parse>
Result check_parser(std::string_view input, Parse parse) {
  const Result whole = parse(input);
  check(whole.consumed <= input.size(), "consumed <= size");
  check((whole.state == ParseState::complete) == (whole.consumed > 0),
        "only a complete message takes bytes");
  check((whole.state == ParseState::error) == !whole.error.empty(), "an error says what");
  check(printable(whole.error), "a printable error");
  for (const std::size_t k : cut_points(input)) {
    const Result part = parse(input.substr(0, k));
    check(part.state == ParseState::incomplete || same(part, whole),
          "a prefix gives incomplete or the whole input's result");
  }
  return whole;
}

// The bytes a client sends for request.
std::string encode(const Socks5Request &request) {
  std::string out = {5, 1, 0};
  switch (request.type) {
    case Socks5Request::AddressType::ipv4: {
      std::array<char, 4> address{};
      check(::inet_pton(AF_INET, request.host.c_str(), address.data()) == 1, "an IPv4 text");
      out.push_back(1);
      out.append(address.data(), address.size());
      break;
    }
    case Socks5Request::AddressType::ipv6: {
      std::array<char, 16> address{};
      check(::inet_pton(AF_INET6, request.host.c_str(), address.data()) == 1, "an IPv6 text");
      out.push_back(4);
      out.append(address.data(), address.size());
      break;
    }
    case Socks5Request::AddressType::domain:
      out.push_back(3);
      out.push_back(static_cast<char>(request.host.size()));
      out += request.host;
      break;
  }
  out.push_back(static_cast<char>(request.port >> 8));
  out.push_back(static_cast<char>(request.port & 0xff));
  return out;
}

void check_request(std::string_view input) {
  const auto r = check_parser<RequestParse5>(input, parse_socks5_request);
  if (r.state != ParseState::complete) return;
  check(r.request.port != 0, "a port");
  check(encode(r.request) == input.substr(0, r.consumed), "a request is the bytes it came from");
}

}  // namespace
}  // namespace sandbox_host::egress::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  using namespace sandbox_host::egress;
  using namespace sandbox_host::egress::fuzz;
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  const auto greeting = check_parser<GreetingParse>(input, parse_socks5_greeting);
  if (greeting.state == ParseState::complete) {
    check(greeting.consumed == 2 + static_cast<unsigned char>(input[1]), "VER NMETHODS METHODS");
    check_request(input.substr(greeting.consumed));
  }
  // Requests on their own too, so that the fuzzer need not find a greeting first.
  check_request(input);
  return 0;
}
