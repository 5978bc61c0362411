// The vocabulary shared by the host and its modules: a plugin launch and a backend's probe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host {

// The network capability granted to a plugin (seed 004's Network).
enum class Network {
  none,      // only the unix socket in SocketDir
  outbound,  // the host's network
};

constexpr std::string_view to_string(Network network) {
  return network == Network::none ? "none" : "outbound";
}

constexpr std::optional<Network> parse_network(std::string_view text) {
  if (text == "none") return Network::none;
  if (text == "outbound") return Network::outbound;
  return std::nullopt;
}

// One plugin launch (seed 004's Spec). Paths are absolute and symlink-resolved.
struct Spec {
  std::string plugin_name;  // for error text only
  std::string binary_path;
  std::string socket_dir;  // read-write at the same absolute path inside the sandbox
  std::string tmp_dir;     // private scratch space; HOME and TMPDIR point here
  Network network = Network::none;
  std::vector<std::string> read_paths;  // extra recursive read-only grants
  std::vector<std::string> args;        // the plugin's arguments after the binary
};

// What a backend found when probing this host.
struct ProbeReport {
  bool available = false;
  std::string reason;   // why it does not work here
  std::string hint;     // what the operator could do about it
  std::string warning;  // what a degraded backend does not cover
  int landlock_abi = 0;
};

}  // namespace sandbox_host
