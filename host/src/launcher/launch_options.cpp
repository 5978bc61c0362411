#include "launch_options.hpp"

#include <sandbox_host/host/env_names.hpp>

#include <string>

namespace sandbox_host {

void add_launch_options(CLI::App &app, LaunchOptions &options) {
  app.add_option("--name", options.name,
                 "Plugin name (config table and messages; default: the binary's file name)");
  app.add_option("--backend", options.backend,
                 "Run under this backend (namespaces, landlock, seatbelt, off), which must work "
                 "here (default: " +
                     std::string(kEnvBackend) + ", the config's, else the probe's choice)");
  app.add_option("--network", options.network,
                 "none, outbound or proxied (through the [egress] proxy; default: the "
                 "config's, else none)");
  app.add_option("--socket-dir", options.socket_dir,
                 "Read-write directory shared with the host at the same path (default: a "
                 "private one, removed afterwards)");
  app.add_option("--tmp-dir", options.tmp_dir,
                 "The plugin's HOME and TMPDIR (default: a private one, removed afterwards)");
  app.add_option("--read", options.read, "Extra read-only path, recursive (repeatable)");
  app.add_option("--env", options.env,
                 "NAME (its value from this environment) or NAME=VALUE: a variable the plugin "
                 "gets on top of BaseEnv (repeatable); nothing else of this environment passes");
  app.add_option("--handshake", options.handshake,
                 "COOKIE: the plugin speaks go-plugin's handshake with this magic cookie "
                 "name; the cookie and the PLUGIN_* handshake variables pass");
  app.add_option("command", options.command,
                 "-- BINARY [ARGS...] (a name without a slash is looked up in PATH)")
      ->required();
  app.positionals_at_end();
}

}  // namespace sandbox_host
