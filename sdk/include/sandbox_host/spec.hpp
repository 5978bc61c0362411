// The vocabulary shared by the host and its modules: a plugin launch and a backend's probe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host {

// The network capability granted to a plugin (seed 004's Network).
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

// Since ABI 1.6. What one launch may consume (docs/config.md, [limits]). kUnlimited leaves a
// bound off; a backend enforces the others before the exec, as far as it can
// (docs/security-model.md says which hold where). Core dumps are always off and have no
// field.
struct Limits {
  static constexpr std::uint64_t kUnlimited = UINT64_MAX;
  std::uint64_t processes = 1024;         // processes and threads (RLIMIT_NPROC)
  std::uint64_t open_files = 4096;        // descriptors (RLIMIT_NOFILE)
  std::uint64_t file_size = 4ULL << 30;   // bytes of one file written (RLIMIT_FSIZE)
  std::uint64_t tmp_size = 512ULL << 20;  // bytes in the sandbox's /tmp (a tmpfs)
  std::uint64_t tmp_inodes = 65536;       // files in the sandbox's /tmp, and in /dev/shm
  std::uint64_t shm_size = 64ULL << 20;   // bytes in the sandbox's /dev/shm (a tmpfs)
  friend bool operator==(const Limits &, const Limits &) = default;
};

// One plugin launch (seed 004's Spec). Paths are absolute and symlink-resolved.
struct Spec {
  std::string plugin_name;  // for error text only
  std::string binary_path;
  std::string socket_dir;  // read-write at the same absolute path inside the sandbox
  std::string tmp_dir;     // private scratch space; HOME and TMPDIR point here
  Network network = Network::none;
  std::vector<std::string> read_paths;  // extra recursive read-only grants
  std::vector<std::string> args;        // the plugin's arguments after the binary
  // Network proxied only; empty (and 0) for the others. The egress proxy's unix socket on
  // the host, which the sandbox relays 127.0.0.1:proxy_port to, and the egress directory
  // (the proxy's CA bundle), bound read-only where it exists; "" for none.
  std::string proxy_socket{};
  std::uint16_t proxy_port = 0;
  std::string egress_dir{};
  // Since ABI 1.4. Empty for a plugin: the deny-by-default tree. Otherwise the view of an
  // agent policy (seed 000's Policy, sandbox-host run --policy): the host's whole file system
  // readable, each rule's path and everything below it at the rule's access, the rule with
  // the longest path winning. ReadPaths, the binary, SocketDir and TmpDir keep their grants on
  // top of it. A backend that cannot hold a launch to every rule refuses the Spec.
  std::vector<PathRule> view{};
  // Since ABI 1.6. The host sets it from its config ([limits]) for every launch.
  Limits limits{};
};

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
