// The vocabulary shared by the host and its modules: a plugin launch and a backend's probe.
#pragma once

#include <sandbox_host/spec_fields.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host {

// The network capability granted to a plugin (docs/design.md#the-spec).
enum class Network {
  none,      // only the unix socket in SocketDir
  outbound,  // the host's network
  proxied,   // an empty network namespace whose one way out is the egress proxy
};

constexpr std::string_view to_string(Network network) {
  return network == Network::none ? "none" : network == Network::outbound ? "outbound" : "proxied";
}

constexpr std::optional<Network> parse_network(std::string_view text) {
  if (text == "none") return Network::none;
  if (text == "outbound") return Network::outbound;
  if (text == "proxied") return Network::proxied;
  return std::nullopt;
}

// For a Spec crossing a boundary (JSON, the C ABI, a prepare call): context names the boundary.
inline Network parse_network_or_throw(std::string_view text, std::string_view context) {
  if (auto network = parse_network(text)) return *network;
  throw std::invalid_argument(std::string(context) + ": unknown network \"" + std::string(text) +
                              "\"");
}

// How far a launch under an agent policy may touch a path and everything below it.
enum class PathAccess {
  none,   // neither read nor written: hidden (Home, Runtime) or denied (Deny)
  read,   // read and executed, never written
  write,  // read, executed and written
};

constexpr std::string_view to_string(PathAccess access) {
  return access == PathAccess::none ? "none" : access == PathAccess::read ? "read" : "write";
}

constexpr std::optional<PathAccess> parse_path_access(std::string_view text) {
  if (text == "none") return PathAccess::none;
  if (text == "read") return PathAccess::read;
  if (text == "write") return PathAccess::write;
  return std::nullopt;
}

// One rule of an agent policy's view of the file system (Spec::view).
struct PathRule {
  std::string path;  // absolute, symlink-resolved, existing
  PathAccess access = PathAccess::none;
  friend bool operator==(const PathRule &, const PathRule &) = default;
};

// The C++ member type of each kind of field in spec_fields.h.
#define SH_SPEC_CXX_STRING std::string
#define SH_SPEC_CXX_NETWORK Network
#define SH_SPEC_CXX_STRINGS std::vector<std::string>
#define SH_SPEC_CXX_PORT std::uint16_t
#define SH_SPEC_CXX_VIEW std::vector<PathRule>
#define SH_SPEC_CXX_LIMITS Limits
#define SH_SPEC_CXX_BYTES std::uint64_t
// What each kind of field starts out as, between braces: empty, none, 0 or Limits'
// defaults, and a BYTES bound at none.
#define SH_SPEC_CXX_INIT_STRING
#define SH_SPEC_CXX_INIT_NETWORK
#define SH_SPEC_CXX_INIT_STRINGS
#define SH_SPEC_CXX_INIT_PORT
#define SH_SPEC_CXX_INIT_VIEW
#define SH_SPEC_CXX_INIT_LIMITS
#define SH_SPEC_CXX_INIT_BYTES Limits::kUnlimited
#define SH_SPEC_CXX_MEMBER(kind, name, since) SH_SPEC_CXX_##kind name{SH_SPEC_CXX_INIT_##kind};
#define SH_LIMITS_CXX_MEMBER(name, default_value) std::uint64_t name = default_value;

// Since ABI 1.6. What one launch may consume (docs/config.md, [limits]): the bounds of
// SH_LIMITS_FIELDS, each at its default. kUnlimited leaves a bound off.
struct Limits {
  static constexpr std::uint64_t kUnlimited = UINT64_MAX;
  SH_LIMITS_FIELDS(SH_LIMITS_CXX_MEMBER)
  friend bool operator==(const Limits &, const Limits &) = default;
};

// One plugin launch (docs/design.md#the-spec): the fields of SH_SPEC_FIELDS, which documents
// each.
struct Spec {
  SH_SPEC_FIELDS(SH_SPEC_CXX_MEMBER)
};
#undef SH_SPEC_CXX_MEMBER
#undef SH_LIMITS_CXX_MEMBER
#undef SH_SPEC_CXX_STRING
#undef SH_SPEC_CXX_NETWORK
#undef SH_SPEC_CXX_STRINGS
#undef SH_SPEC_CXX_PORT
#undef SH_SPEC_CXX_VIEW
#undef SH_SPEC_CXX_LIMITS
#undef SH_SPEC_CXX_BYTES
#undef SH_SPEC_CXX_INIT_STRING
#undef SH_SPEC_CXX_INIT_NETWORK
#undef SH_SPEC_CXX_INIT_STRINGS
#undef SH_SPEC_CXX_INIT_PORT
#undef SH_SPEC_CXX_INIT_VIEW
#undef SH_SPEC_CXX_INIT_LIMITS
#undef SH_SPEC_CXX_INIT_BYTES

// The ABI minor each field of Spec came in: spec_since::view is 4.
namespace spec_since {
#define SH_SPEC_SINCE(kind, name, since) inline constexpr std::uint32_t name = since;
SH_SPEC_FIELDS(SH_SPEC_SINCE)
#undef SH_SPEC_SINCE
}  // namespace spec_since

// Calls visit(name, member) for each field of Spec, in order, with a pointer to the member.
template <typename Visit>
constexpr void for_each_spec_field(Visit &&visit) {
#define SH_SPEC_VISIT(kind, name, since) visit(#name, &Spec::name);
  SH_SPEC_FIELDS(SH_SPEC_VISIT)
#undef SH_SPEC_VISIT
}

// Calls visit(name, member) for each bound of Limits, in order.
template <typename Visit>
constexpr void for_each_limit(Visit &&visit) {
#define SH_LIMITS_VISIT(name, default_value) visit(#name, &Limits::name);
  SH_LIMITS_FIELDS(SH_LIMITS_VISIT)
#undef SH_LIMITS_VISIT
}

// Since ABI 1.7: how a backend bounds one limit of Limits on this host.
struct LimitBound {
  std::string limit;  // as [limits] names it: "processes", "open_files", ...
  bool enforced = false;
  std::string how;  // enforced: by what ("RLIMIT_NOFILE"); else why not, and what would
  bool operator==(const LimitBound &) const = default;
};

// What a backend found when probing this host.
struct ProbeReport {
  bool available = false;
  std::string reason;   // why it does not work here
  std::string hint;     // what the operator could do about it
  std::string warning;  // what a degraded backend does not cover
  int landlock_abi = 0;
  // Since ABI 1.7: each limit of Limits the backend holds to its launches, and how.
  std::vector<LimitBound> bounds;
};

}  // namespace sandbox_host
