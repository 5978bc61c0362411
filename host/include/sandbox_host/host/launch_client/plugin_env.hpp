// What a plugin gets on top of BaseEnv: the variables its caller names, and nothing else of
// the caller's environment. go-plugin 1.0.1 appends the gateway's whole environment to the
// command it starts, so the wrapper, not the gateway, decides what passes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host {

// The variables of go-plugin's handshake besides the magic cookie, whose name the gateway
// chooses: the port range and protocol versions it offers, its AutoMTLS certificate and
// where newer releases put the plugin's socket.
inline constexpr std::string_view kGoPluginVariables[] = {
    "PLUGIN_MIN_PORT",    "PLUGIN_MAX_PORT",        "PLUGIN_PROTOCOL_VERSIONS",
    "PLUGIN_CLIENT_CERT", "PLUGIN_UNIX_SOCKET_DIR",
};

struct PluginEnvRequest {
  // NAME (its value from the caller's environment; left out when the caller has none) or
  // NAME=VALUE; a later entry for the same name wins.
  std::vector<std::string> entries;
  // go-plugin's MagicCookieKey: that variable and kGoPluginVariables pass from the caller.
  std::optional<std::string> handshake;
};

// Throws std::invalid_argument naming the entry when it is not NAME or NAME=VALUE with a
// portable name (letters, digits and _, not starting with a digit), or names a CLAWPATROL_
// variable, which is the gateway's own, or one BaseEnv sets.
void check_env_entry(const std::string &entry, const std::string &where);

// The NAME=VALUE entries request selects from caller_env (NAME=VALUE entries), in the
// order first named, each name once.
std::vector<std::string> plugin_env(const PluginEnvRequest &request,
                                    const std::vector<std::string> &caller_env);

// The names of NAME=VALUE entries, comma-separated, for the audit: never their values.
std::string env_names(const std::vector<std::string> &entries);

}  // namespace sandbox_host
