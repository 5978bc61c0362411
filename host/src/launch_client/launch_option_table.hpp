// The options `sandbox-host run` and sandbox-host-launch share, as data: run registers them
// with CLI11 (launch_options.cpp), the client with getopt_long (launch_main.cpp), which
// keeps its start-up that of a small program. One table, so that the two cannot drift.
#pragma once

#include <sandbox_host/host/launch_client/launch_client.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace sandbox_host {

struct LaunchOptionField {
  const char *name;  // the long option, without "--"
  const char *help;
  // Exactly one is set: an option given at most once, or a repeatable one.
  std::optional<std::string> LaunchOptions::*once = nullptr;
  std::vector<std::string> LaunchOptions::*repeated = nullptr;
};

inline constexpr std::array<LaunchOptionField, 8> kLaunchOptionFields{{
    {"name", "Plugin name (config table and messages; default: the binary's file name)",
     &LaunchOptions::name},
    {"backend",
     "Run under this backend (namespaces, landlock, seatbelt, off), which must work here "
     "(default: CLAWPATROL_SANDBOX_BACKEND, the config's, else the probe's choice)",
     &LaunchOptions::backend},
    {"network",
     "none, outbound or proxied (through the [egress] proxy; default: the config's, else "
     "none)",
     &LaunchOptions::network},
    {"socket-dir",
     "Read-write directory shared with the host at the same path (default: a private one, "
     "removed afterwards)",
     &LaunchOptions::socket_dir},
    {"tmp-dir", "The plugin's HOME and TMPDIR (default: a private one, removed afterwards)",
     &LaunchOptions::tmp_dir},
    {"read", "Extra read-only path, recursive (repeatable)", nullptr, &LaunchOptions::read},
    {"env",
     "NAME (its value from this environment) or NAME=VALUE: a variable the plugin gets on "
     "top of BaseEnv (repeatable); nothing else of this environment passes",
     nullptr, &LaunchOptions::env},
    {"handshake",
     "COOKIE: the plugin speaks go-plugin's handshake with this magic cookie name; the "
     "cookie and the PLUGIN_* handshake variables pass",
     &LaunchOptions::handshake},
}};

inline constexpr const char *kLaunchCommandHelp =
    "-- BINARY [ARGS...] (a name without a slash is looked up in PATH)";

}  // namespace sandbox_host
