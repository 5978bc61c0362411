// Where a traced connect or send goes, from the socket address the plugin passed: its bytes
// are the plugin's, so every length and family is checked before a field is read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sandbox_host::learn {

struct Endpoint {
  enum class Family { inet, inet6, unix_path, unix_abstract };
  Family family = Family::inet;
  std::string address;  // "10.0.0.1", "2001:db8::1", a unix path, an abstract name
  std::uint16_t port = 0;

  bool internet() const noexcept { return family == Family::inet || family == Family::inet6; }
  bool loopback() const noexcept;
  // "10.0.0.1:53", "[2001:db8::1]:443", "/run/x.sock", "@name"
  std::string describe() const;
  friend bool operator==(const Endpoint &, const Endpoint &) = default;
  friend auto operator<=>(const Endpoint &, const Endpoint &) = default;
};

// The endpoint of a sockaddr of AF_INET, AF_INET6 or AF_UNIX; nullopt for another family,
// a length too short for the family, or AF_UNSPEC (a connect that dissolves an
// association).
std::optional<Endpoint> parse_sockaddr(std::string_view bytes);

}  // namespace sandbox_host::learn
